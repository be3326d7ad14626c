"""The Anthropic backend against a fake HTTP transport."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import anthropic
import pytest

from posbias.errors import InputError
from posbias.llm.backends import make_backend
from posbias.llm.backends.anthropic_api import api_version
from posbias.llm.cache import ResponseCache
from posbias.llm.generate import LanguageModel
from posbias.llm.spec import ModelSpec
from posbias.llm.types import Decoding, Request

SPEC = ModelSpec(backend="anthropic_messages", model="claude-3-5-sonnet-20241022", wrapper="messages",
                 max_retries=2, retry_wait_s=0)
MESSAGES = ({"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "Capital of France?"})


def run(api, requests, decoding=Decoding(), spec=SPEC):
    model = LanguageModel(spec, ResponseCache("unused", "off"), backend=make_backend(spec, http_client=api.client))
    return model.generate(requests, decoding, progress=False)


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")


def test_sends_system_apart_and_no_sampling_settings(fake_api, key, caplog):
    """The installed SDK (API version 2026-10-21) takes no temperature or top_p: none is sent, and a warning
    says once that the answers are not greedy."""
    api = fake_api(anthropic, [(200, fake_api.anthropic_response("Paris", "end_turn"))])
    with caplog.at_level(logging.WARNING, logger="posbias.llm.backends.anthropic_api"):
        [done, _] = run(api, [Request(messages=MESSAGES), Request(prompt="Hi")], Decoding(max_new_tokens=9))
    assert api.requests[0]["url"] == "https://api.anthropic.com/v1/messages"
    assert api.bodies[0] == {"model": "claude-3-5-sonnet-20241022", "max_tokens": 9, "system": "Answer in one word.",
                             "messages": [{"role": "user", "content": "Capital of France?"}]}
    assert (done.text, done.finish_reason, done.prompt_tokens, done.completion_tokens) == ("Paris", "stop", 12, 3)
    assert done.sent == [dict(m) for m in MESSAGES]  # what the caller asked, system included
    assert [r.getMessage() for r in caplog.records] == [
        f"claude-3-5-sonnet-20241022: Anthropic API version {api_version()} takes no temperature or top_p, so "
        "Claude samples with its own defaults: its answers are not greedy"]


def test_stop_sequences_and_length(fake_api, key):
    api = fake_api(anthropic, [(200, fake_api.anthropic_response("Par", "max_tokens"))])
    [done] = run(api, [Request(prompt="Hi")], Decoding(top_p=0.9, stop=("\n\n",)))
    assert api.bodies[0]["stop_sequences"] == ["\n\n"] and "top_p" not in api.bodies[0]
    assert "system" not in api.bodies[0] and done.finish_reason == "length"


class OldMessages:
    """`messages` of an SDK before 2.0 (API version 2023-06-01), which still takes sampling settings."""

    def __init__(self):
        self.calls = []
        # the backend calls through the raw response, which the SDK parses on request
        self.with_raw_response = SimpleNamespace(create=lambda **options: SimpleNamespace(
            status_code=200, headers={"content-type": "application/json"}, parse=lambda: self.create(**options)))

    def create(self, *, model, max_tokens, messages, temperature=None, top_p=None, system=None, stop_sequences=None):
        self.calls.append({k: v for k, v in locals().items() if k != "self" and v is not None})
        return SimpleNamespace(content=[SimpleNamespace(type="text", text="ok")], stop_reason="stop_sequence",
                               usage=SimpleNamespace(input_tokens=4, output_tokens=1))


def test_an_sdk_with_sampling_gets_temperature_and_top_p_only_when_not_one(key):
    backend = make_backend(SPEC)
    backend.client = SimpleNamespace(messages=OldMessages())
    answer = backend.complete([{"role": "user", "content": "Hi"}], Decoding(max_new_tokens=3))
    backend.complete([{"role": "user", "content": "Hi"}], Decoding(top_p=0.9))
    assert backend.client.messages.calls == [
        {"model": SPEC.model, "max_tokens": 3, "messages": [{"role": "user", "content": "Hi"}], "temperature": 0.0},
        {"model": SPEC.model, "max_tokens": 100, "messages": [{"role": "user", "content": "Hi"}], "temperature": 0.0,
         "top_p": 0.9}]
    assert (answer.text, answer.finish_reason) == ("ok", "stop")


def test_api_version_is_the_header_sent_and_part_of_the_key(fake_api, key):
    api = fake_api(anthropic, [(200, fake_api.anthropic_response())])
    backend = make_backend(SPEC, http_client=api.client)
    run(api, [Request(prompt="Hi")])
    version = backend.identity()["api_version"]
    assert version and api.requests[0]["headers"]["anthropic-version"] == version


@pytest.mark.parametrize("status", [429, 500, 529])
def test_transient_statuses_are_retried(fake_api, key, status):
    api = fake_api(anthropic, [(status, fake_api.error_body()), (200, fake_api.anthropic_response("ok"))])
    assert run(api, [Request(prompt="Hi")])[0].text == "ok" and len(api.requests) == 2


def test_client_errors_propagate(fake_api, key):
    api = fake_api(anthropic, [(400, fake_api.error_body("bad"))])
    with pytest.raises(InputError, match=r"refused the request: BadRequestError \(HTTP 400\); check"):
        run(api, [Request(prompt="Hi")])
    assert len(api.requests) == 1


def test_missing_key_names_the_variable(fake_api):
    api = fake_api(anthropic, [(200, fake_api.anthropic_response())])
    with pytest.raises(InputError, match="environment variable ANTHROPIC_API_KEY"):
        run(api, [Request(prompt="Hi")])
    assert api.requests == []
