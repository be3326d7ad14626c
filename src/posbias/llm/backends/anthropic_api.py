"""Anthropic's Messages API, through the official SDK (wrapper `messages`).

A leading system message goes to the `system` parameter. The SDK's `anthropic-version` header is part of the
cache key (`api_version`), so an SDK upgrade that moves the API version never replays answers made under the
old one. Stop reasons are reported as "stop" (end of turn, a stop sequence) or "length" (max_tokens), like the
other backends; any other reason as Anthropic names it. The SDK never retries (`LanguageModel` does); a body
that is not JSON or has no `content` list is a transient failure too (`posbias.llm.backends.api_calls`).

Sampling settings: API version 2026-10-21 (SDK 2.x) refuses temperature, top_p and top_k at any value, and
its SDK has no such parameters, so with it nothing is sent and Claude samples with its own defaults: answers
are not greedy (a warning says so once per model). An SDK that still takes them (API version 2023-06-01) gets
`temperature`, and `top_p` only when it is not 1.0, since newer Claude models refuse both together.
"""

from __future__ import annotations

import functools
import inspect
import logging
from typing import Mapping

from posbias.llm.backends import api_calls
from posbias.llm.backends.api_calls import NotTheAnswer
from posbias.llm.backends.base import Answer, Backend, api_key, package_version
from posbias.llm.spec import ModelSpec
from posbias.llm.types import Decoding

log = logging.getLogger(__name__)

FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


@functools.cache
def api_version() -> str | None:
    """The `anthropic-version` header the installed SDK sends (read from a client that never calls out)."""
    import anthropic

    return anthropic.Anthropic(api_key="unused", max_retries=0).default_headers.get("anthropic-version")


def takes_sampling(create) -> bool:
    """Whether the SDK's `messages.create` still has a temperature parameter (SDKs before 2.0)."""
    try:
        return "temperature" in inspect.signature(create).parameters
    except (TypeError, ValueError):
        return False


class AnthropicMessages(Backend):
    WRAPPERS = ("messages",)

    def __init__(self, spec: ModelSpec, http_client=None):
        super().__init__(spec)
        self.http_client = http_client
        self._warned = False

    def identity(self) -> dict:
        return {**super().identity(), "api_version": api_version()}

    @functools.cached_property
    def client(self):
        import anthropic

        return anthropic.Anthropic(api_key=api_key(self.spec), base_url=self.spec.base_url, max_retries=0,
                                   timeout=self.spec.timeout_s, http_client=self.http_client)

    def sdk(self) -> dict:
        return package_version("anthropic")

    def server(self) -> str:
        return api_calls.public_url(self.client.base_url)

    def complete(self, sent: list, decoding: Decoding, meta: Mapping | None = None) -> Answer:
        import anthropic

        messages = list(sent)
        options = {"model": self.spec.model, "max_tokens": decoding.max_new_tokens}
        if messages and messages[0].get("role") == "system":
            options["system"] = messages.pop(0)["content"]
        if decoding.stop:
            options["stop_sequences"] = list(decoding.stop)
        create = self.client.messages.create
        if takes_sampling(create):
            options["temperature"] = decoding.temperature
            if decoding.top_p != 1.0:
                options["top_p"] = decoding.top_p
        elif not self._warned:
            self._warned = True
            log.warning("%s: Anthropic API version %s takes no temperature or top_p, so Claude samples with its "
                        "own defaults: its answers are not greedy", self.spec.model, api_version())
        raw = api_calls.send(anthropic, self.spec.timeout_s, self.client.messages.with_raw_response.create,
                             messages=messages, **options)
        response = api_calls.parse(raw)
        blocks = getattr(response, "content", None)
        if not isinstance(blocks, list):  # an empty list is an answer: nothing said
            raise NotTheAnswer(raw, "no content")
        text = "".join(api_calls.text_of(raw, block, "text", "a text block without text") for block in blocks
                       if getattr(block, "type", None) == "text")
        usage = getattr(response, "usage", None)
        return Answer(text, FINISH.get(response.stop_reason, response.stop_reason),
                      getattr(usage, "input_tokens", None), getattr(usage, "output_tokens", None))
