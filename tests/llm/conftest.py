"""Fake HTTP transports for the API backends: no test reaches a network."""

from __future__ import annotations

import importlib
import json

import pytest


def sdk_httpx(sdk):
    """The HTTP module an SDK's client is built on (httpx or a fork of it such as httpx2)."""
    return importlib.import_module(sdk.DefaultHttpxClient.__mro__[1].__module__.split(".")[0])


class FakeAPI:
    """An `http_client` whose transport answers from a script and records each request it got.

    `script` items: `(status, json body)`, or an exception instance to raise (a timeout, a refused connection);
    the last item repeats."""

    def __init__(self, sdk, script):
        self.httpx = sdk_httpx(sdk)
        self.script = list(script)
        self.requests = []
        self.client = self.httpx.Client(transport=self.httpx.MockTransport(self._handle))

    def _handle(self, request):
        self.requests.append({"url": str(request.url), "headers": dict(request.headers),
                              "body": json.loads(request.content or b"null")})
        item = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(item, Exception):
            raise item
        status, body = item
        return self.httpx.Response(status, json=body)

    @property
    def bodies(self):
        return [request["body"] for request in self.requests]

    # Response bodies as the APIs send them.
    @staticmethod
    def chat_response(text="Paris", finish_reason="stop"):
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-test",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": finish_reason}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13}}

    @staticmethod
    def completion_response(text=" Paris", finish_reason="length", usage=True):
        body = {"id": "cmpl-1", "object": "text_completion", "created": 0, "model": "served",
                "choices": [{"index": 0, "text": text, "finish_reason": finish_reason, "logprobs": None}]}
        if usage:
            body["usage"] = {"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45}
        return body

    @staticmethod
    def anthropic_response(text="Paris", stop_reason="end_turn"):
        return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [{"type": "text", "text": text}], "stop_reason": stop_reason, "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 3}}

    @staticmethod
    def error_body(message="slow down"):
        return {"error": {"type": "error", "message": message}}


@pytest.fixture
def fake_api():
    return FakeAPI


@pytest.fixture(autouse=True)
def no_sdk_environment(monkeypatch):
    """The SDKs read base URLs and extra headers from the environment: tests see none of the machine's."""
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS", "OPENAI_API_KEY",
                 "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
