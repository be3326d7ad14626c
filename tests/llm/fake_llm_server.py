"""A language-model server on the loopback address, in a thread, for tests that go through the SDKs' real HTTP
stack (sockets, timeouts, content types): OpenAI's `/v1/chat/completions` and `/v1/completions` and Anthropic's
`/v1/messages`, answering as the SDKs expect, or failing the ways real servers and proxies do.

The response bodies are the APIs' own shapes; conftest's `FakeAPI` (a fake transport, no socket) answers with the
same ones.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def chat_response(text="Paris", finish_reason="stop"):
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13}}


def completion_response(text=" Paris", finish_reason="length", usage=True):
    body = {"id": "cmpl-1", "object": "text_completion", "created": 0, "model": "served",
            "choices": [{"index": 0, "text": text, "finish_reason": finish_reason, "logprobs": None}]}
    if usage:
        body["usage"] = {"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45}
    return body


def anthropic_response(text="Paris", stop_reason="end_turn"):
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": text}], "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 3}}


def error_body(message="slow down"):
    return {"error": {"type": "error", "message": message}}


def asked(path: str, body: dict) -> str:
    """The prompt a request carries: the last message's content, or a completion's prompt."""
    return body["prompt"] if path.endswith("/completions") and "messages" not in body else \
        body["messages"][-1]["content"]


def good_answer(path: str, body: dict) -> dict:
    """The API's answer to a request, its text made from the prompt so that a test can tell answers apart."""
    text = f"answer to {asked(path, body)[-40:]}"
    if path.endswith("/messages"):
        return anthropic_response(text)
    return completion_response(text) if path.endswith("/v1/completions") else chat_response(text)


PROXY_PAGE = b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"
# What each behaviour answers: (status, content type, body); "silent" never answers.
BEHAVIOURS = {
    "failing": (500, "application/json", json.dumps(error_body("internal error")).encode()),
    "overloaded": (529, "application/json", json.dumps(error_body("overloaded")).encode()),
    "not_json": (200, "text/html", PROXY_PAGE),  # a proxy's error page
    "not_json_labelled_json": (200, "application/json", PROXY_PAGE),  # the same, under a JSON content type
    "wrong_shape": (200, "application/json", json.dumps({"object": "error", "message": "model loading"}).encode()),
    "no_choices": (200, "application/json", json.dumps({"id": "x", "object": "chat.completion", "created": 0,
                                                        "model": "m", "choices": []}).encode()),
    "silent": None,
}
# Answers no retry mends: something to fix in the model's settings.
REFUSALS = {
    "refused_key": (401, "application/json", json.dumps(error_body("invalid api key")).encode()),
    "unknown_model": (404, "application/json", json.dumps(error_body("no such model")).encode()),
}


class FakeLLMServer:
    """Serves on 127.0.0.1 (a free port) until `close()`. The requests are answered in the order they come by the
    behaviours of `first`, then all by `behaviour`; a behaviour is "good" or a key of `BEHAVIOURS`. So
    `FakeLLMServer("failing", first=["good", "good"])` answers two prompts and then fails. `requests` records
    (path, JSON body, headers) of every request."""

    def __init__(self, behaviour: str = "good", first: tuple[str, ...] = ()):
        unknown = {behaviour, *first} - {"good", *BEHAVIOURS, *REFUSALS}
        assert not unknown, f"no behaviour {unknown}"
        self.behaviour = behaviour
        self.first = list(first)
        self.requests: list[tuple[str, dict, dict]] = []
        self.closing = threading.Event()  # wakes the silent handlers, so that closing never waits on them
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        # a short poll, so that closing takes a moment, not serve_forever's default half second
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def prompts(self) -> list[str]:
        return [asked(path, body) for path, body, _ in self.requests]

    def close(self) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def _answer(self, path: str, body: dict, headers: dict):
        with self._lock:
            self.requests.append((path, body, headers))
            behaviour = self.first.pop(0) if self.first else self.behaviour
        if behaviour == "good":
            return 200, "application/json", json.dumps(good_answer(path, body)).encode()
        return BEHAVIOURS[behaviour] if behaviour in BEHAVIOURS else REFUSALS[behaviour]

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                answer = server._answer(self.path, body, dict(self.headers))
                if answer is None:  # silent: hold the connection open without a byte until the test ends
                    server.closing.wait(30)
                    self.close_connection = True
                    return
                status, content_type, payload = answer
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):  # the test's output stays the test's
                pass

        return Handler
