"""Fake HTTP transports for the API backends, and a fake server on the loopback address: no test reaches a
network."""

from __future__ import annotations

import importlib
import json

import pytest
from fake_llm_server import FakeLLMServer, anthropic_response, chat_response, completion_response, error_body


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

    # Response bodies as the APIs send them (the loopback server's too).
    chat_response = staticmethod(chat_response)
    completion_response = staticmethod(completion_response)
    anthropic_response = staticmethod(anthropic_response)
    error_body = staticmethod(error_body)


@pytest.fixture
def fake_api():
    return FakeAPI


@pytest.fixture(autouse=True)
def no_sdk_environment(monkeypatch):
    """The SDKs read base URLs and extra headers from the environment: tests see none of the machine's."""
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS", "OPENAI_API_KEY",
                 "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def llm_server():
    """Start `FakeLLMServer`s on 127.0.0.1: `llm_server(behaviour, first=())`; all are closed after the test."""
    started = []

    def start(behaviour="good", first=()):
        started.append(FakeLLMServer(behaviour, first))
        return started[-1]

    yield start
    for server in started:
        server.close()
