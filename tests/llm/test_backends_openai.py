"""The OpenAI backends against a fake HTTP transport: what is sent, what is read, retries, keys."""

from __future__ import annotations

import openai
import pytest

from posbias.errors import InputError
from posbias.llm.backends import make_backend
from posbias.llm.cache import ResponseCache
from posbias.llm.generate import LanguageModel
from posbias.llm.spec import ModelSpec
from posbias.llm.types import Decoding, Request
from posbias.llm.wrappers import render

CHAT = ModelSpec(backend="openai_chat", model="gpt-4o-2024-08-06", wrapper="messages", max_retries=3,
                 retry_wait_s=0, timeout_s=7)
SERVER = ModelSpec(backend="openai_completions", model="meta-llama/Llama-2-7b-chat-hf", wrapper="llama2_chat",
                   base_url="http://localhost:8000/v1", max_retries=3, retry_wait_s=0)


def run(spec, api, requests, decoding=Decoding(), cache=None):
    model = LanguageModel(spec, cache or ResponseCache("unused", "off"),
                          backend=make_backend(spec, http_client=api.client))
    return model.generate(requests, decoding, progress=False)


def test_chat_sends_greedy_settings_and_reads_the_answer(fake_api, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    api = fake_api(openai, [(200, fake_api.chat_response("Paris", "stop"))])
    messages = ({"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital of France?"})
    [done] = run(CHAT, api, [Request(messages=messages)], Decoding(max_new_tokens=7, stop=("\n",), seed=3))
    assert api.requests[0]["url"] == "https://api.openai.com/v1/chat/completions"
    assert api.requests[0]["headers"]["authorization"] == "Bearer sk-test"
    assert api.bodies == [{"model": "gpt-4o-2024-08-06", "messages": [dict(m) for m in messages], "temperature": 0.0,
                           "top_p": 1.0, "max_tokens": 7, "stop": ["\n"], "seed": 3}]
    assert (done.text, done.finish_reason, done.prompt_tokens, done.completion_tokens) == ("Paris", "stop", 11, 2)
    assert done.sent == [dict(m) for m in messages] and not done.cache_hit


def test_chat_omits_stop_and_seed_when_unset(fake_api, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    api = fake_api(openai, [(200, fake_api.chat_response())])
    run(CHAT, api, [Request(prompt="Hi")])
    assert api.bodies == [{"model": "gpt-4o-2024-08-06", "messages": [{"role": "user", "content": "Hi"}],
                           "temperature": 0.0, "top_p": 1.0, "max_tokens": 100}]


def test_completions_send_the_wrapped_prompt_to_the_server(fake_api):
    api = fake_api(openai, [(200, fake_api.completion_response(" Paris", "length"))])
    request = Request(prompt="Capital of France?")
    [done] = run(SERVER, api, [request], Decoding(max_new_tokens=5))
    assert api.requests[0]["url"] == "http://localhost:8000/v1/completions"
    assert api.requests[0]["headers"]["authorization"] == "Bearer EMPTY"  # a local server ignores the key
    assert api.bodies[0]["prompt"] == render("llama2_chat", request) == done.sent
    assert {k: api.bodies[0][k] for k in ("temperature", "top_p", "max_tokens")} == \
        {"temperature": 0.0, "top_p": 1.0, "max_tokens": 5}
    assert (done.text, done.finish_reason, done.prompt_tokens) == (" Paris", "length", 40)


def test_completions_without_usage(fake_api):
    api = fake_api(openai, [(200, fake_api.completion_response(usage=False))])
    [done] = run(SERVER, api, [Request(prompt="x")])
    assert done.prompt_tokens is None and done.completion_tokens is None


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_statuses_are_retried_by_posbias_only(fake_api, monkeypatch, status):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    api = fake_api(openai, [(status, fake_api.error_body()), (status, fake_api.error_body()),
                            (200, fake_api.chat_response("late"))])
    [done] = run(CHAT, api, [Request(prompt="Hi")])
    assert done.text == "late" and len(api.requests) == 3  # the SDK itself never retried


def test_timeouts_are_retried(fake_api, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    api = fake_api(openai, [])
    api.script = [api.httpx.ConnectTimeout("slow"), (200, fake_api.chat_response("ok"))]
    assert run(CHAT, api, [Request(prompt="Hi")])[0].text == "ok" and len(api.requests) == 2


def test_client_errors_are_not_retried(fake_api, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    api = fake_api(openai, [(400, fake_api.error_body("bad model"))])
    with pytest.raises(InputError, match=r"refused the request: BadRequestError \(HTTP 400\); check"):
        run(CHAT, api, [Request(prompt="Hi")])
    assert len(api.requests) == 1


def test_missing_key_names_the_variable_and_replay_needs_none(fake_api, monkeypatch, tmp_path):
    api = fake_api(openai, [(200, fake_api.chat_response("Paris"))])
    with pytest.raises(InputError, match="environment variable OPENAI_API_KEY"):
        run(CHAT, api, [Request(prompt="Hi")])
    spec = ModelSpec(**{**CHAT.__dict__, "api_key_env": "MY_OPENAI_KEY"})
    monkeypatch.setenv("MY_OPENAI_KEY", "sk-mine")
    run(spec, api, [Request(prompt="Hi")], cache=ResponseCache(tmp_path))
    assert api.requests[-1]["headers"]["authorization"] == "Bearer sk-mine"
    monkeypatch.delenv("MY_OPENAI_KEY")
    [replayed] = run(spec, api, [Request(prompt="Hi")], cache=ResponseCache(tmp_path, "read_only"))
    assert replayed.text == "Paris" and replayed.cache_hit and len(api.requests) == 1


def test_wrappers_are_checked():
    with pytest.raises(InputError, match="openai_chat takes the wrapper\\(s\\) messages, not 'none'"):
        make_backend(ModelSpec(backend="openai_chat", model="gpt-4o"))
    with pytest.raises(InputError, match="not 'chat_template'"):
        make_backend(ModelSpec(backend="openai_completions", model="m", wrapper="chat_template"))


def test_client_settings():
    client = make_backend(SERVER).client
    assert client.max_retries == 0 and client.api_key == "EMPTY"
    assert str(client.base_url).rstrip("/") == "http://localhost:8000/v1"
    chat = make_backend(ModelSpec(**{**CHAT.__dict__, "base_url": "http://x/v1"})).client
    assert chat.timeout == 7
