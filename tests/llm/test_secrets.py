"""API keys never reach a file: not the cache, not a log (even at DEBUG, with the SDKs' own logging)."""

from __future__ import annotations

import logging

import anthropic
import openai
import pytest

from posbias.errors import InputError

from posbias.llm.backends import make_backend
from posbias.llm.cache import ResponseCache
from posbias.llm.generate import LanguageModel
from posbias.llm.spec import ModelSpec
from posbias.llm.types import Decoding, Request

OPENAI_KEY = "sk-posbias-TOPSECRET-0penai-7f3a9"
SERVER_KEY = "vllm-posbias-TOPSECRET-server-51c2"
ANTHROPIC_KEY = "sk-ant-posbias-TOPSECRET-c1aude-88e0"


@pytest.fixture
def debug_log(tmp_path):
    """Every logger at DEBUG into a file under tmp_path, as a job log would be."""
    handler = logging.FileHandler(tmp_path / "job.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield tmp_path / "job.log"
    root.removeHandler(handler)
    root.setLevel(old_level)
    handler.close()


def test_keys_appear_in_no_file(tmp_path, monkeypatch, fake_api, debug_log):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("MY_SERVER_KEY", SERVER_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    cache = ResponseCache(tmp_path / "cache")
    runs = [  # (spec, its SDK, its key, its answer): each call fails once with a transient status first
        (ModelSpec(backend="openai_chat", model="gpt-4o", wrapper="messages", retry_wait_s=0),
         openai, OPENAI_KEY, fake_api.chat_response()),
        (ModelSpec(backend="openai_completions", model="served", wrapper="vicuna", base_url="http://localhost:9/v1",
                   api_key_env="MY_SERVER_KEY", retry_wait_s=0), openai, SERVER_KEY, fake_api.completion_response()),
        (ModelSpec(backend="anthropic_messages", model="claude-test", wrapper="messages", retry_wait_s=0),
         anthropic, ANTHROPIC_KEY, fake_api.anthropic_response()),
    ]
    for spec, sdk, key, answer in runs:
        api = fake_api(sdk, [(503, fake_api.error_body()), (200, answer)])
        model = LanguageModel(spec, cache, backend=make_backend(spec, http_client=api.client))
        model.generate([Request(prompt="What is the capital of France?")], Decoding(), progress=False)
        assert len(api.requests) == 2
        assert key in str(api.requests[0]["headers"])  # the key was really sent: its absence below means something
        # a refused key is one line of input to fix; the job's log gets the whole chain, the SDK's error included
        refused = fake_api(sdk, [(401, fake_api.error_body("invalid key"))])
        with pytest.raises(InputError, match="refused the request: AuthenticationError") as caught:
            LanguageModel(spec, cache, backend=make_backend(spec, http_client=refused.client)).generate(
                [Request(prompt="other")], Decoding(), progress=False)
        logging.getLogger("posbias").error("job failed", exc_info=caught.value)

    for handler in logging.getLogger().handlers:
        handler.flush()
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert debug_log in written and any(path.suffix == ".jsonl" for path in written)
    log_text = debug_log.read_text()
    assert log_text.count("retry 1 of 3") == 3 and "AuthenticationError" in log_text
    assert "DEBUG openai" in log_text and "DEBUG anthropic" in log_text  # the SDKs' debug logging was captured
    for path in written:
        content = path.read_bytes()
        for secret in (OPENAI_KEY, SERVER_KEY, ANTHROPIC_KEY, "TOPSECRET"):
            assert secret.encode() not in content, f"{secret} written to {path.relative_to(tmp_path)}"
