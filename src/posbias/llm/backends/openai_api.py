"""OpenAI's API and OpenAI-compatible servers (vLLM, llama.cpp server, TGI), through the official SDK.

- `openai_chat`: `chat.completions`, sent a message list (wrapper `messages`);
- `openai_completions`: the raw `/v1/completions` endpoint of a server at `base_url`, sent the wrapped prompt
  string as it is, so base models and custom wrappers get exactly the text posbias rendered.

The SDK never retries (`max_retries=0`): `LanguageModel` does, logging each retry. A body that is not JSON or
lacks the choice read here is a transient failure too (`posbias.llm.backends.api_calls`). The client is built on
the first call, so replaying a cache needs no key.
"""

from __future__ import annotations

import functools
from typing import Mapping

from posbias.llm import wrappers
from posbias.llm.backends import api_calls
from posbias.llm.backends.api_calls import NotTheAnswer
from posbias.llm.backends.base import Answer, Backend, api_key, package_version
from posbias.llm.spec import ModelSpec
from posbias.llm.types import Decoding


class _OpenAIBackend(Backend):
    def __init__(self, spec: ModelSpec, http_client=None):
        super().__init__(spec)
        self.http_client = http_client

    @functools.cached_property
    def client(self):
        import openai

        return openai.OpenAI(api_key=api_key(self.spec), base_url=self.spec.base_url, max_retries=0,
                             timeout=self.spec.timeout_s, http_client=self.http_client)

    def sdk(self) -> dict:
        return package_version("openai")

    def _options(self, decoding: Decoding) -> dict:
        options = {"model": self.spec.model, "temperature": decoding.temperature, "top_p": decoding.top_p,
                   "max_tokens": decoding.max_new_tokens}
        if decoding.stop:
            options["stop"] = list(decoding.stop)
        if decoding.seed is not None:
            options["seed"] = decoding.seed
        return options

    def server(self) -> str:
        return api_calls.public_url(self.client.base_url)

    def _call(self, resource, **options):
        """The first choice of `resource.create(**options)` (chat or text completions) and the response."""
        import openai

        raw = api_calls.send(openai, self.spec.timeout_s, resource.with_raw_response.create, **options)
        response = api_calls.parse(raw)
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise NotTheAnswer(raw, "no choices")
        return choices[0], response, raw


def _usage(response) -> tuple[int | None, int | None]:
    usage = getattr(response, "usage", None)  # some compatible servers send none
    return getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)


class OpenAIChat(_OpenAIBackend):
    WRAPPERS = ("messages",)

    def complete(self, sent: list, decoding: Decoding, meta: Mapping | None = None) -> Answer:
        choice, response, raw = self._call(self.client.chat.completions, messages=sent, **self._options(decoding))
        content = api_calls.text_of(raw, getattr(choice, "message", None), "content", "no message content")
        return Answer(content, choice.finish_reason, *_usage(response))


class OpenAICompletions(_OpenAIBackend):
    WRAPPERS = tuple(name for name in wrappers.WRAPPERS if name not in ("messages", "chat_template"))

    def complete(self, sent: str, decoding: Decoding, meta: Mapping | None = None) -> Answer:
        choice, response, raw = self._call(self.client.completions, prompt=sent, **self._options(decoding))
        return Answer(api_calls.text_of(raw, choice, "text", "no choice text"), choice.finish_reason,
                      *_usage(response))
