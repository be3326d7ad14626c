"""OpenAI's API and OpenAI-compatible servers (vLLM, llama.cpp server, TGI), through the official SDK.

- `openai_chat`: `chat.completions`, sent a message list (wrapper `messages`);
- `openai_completions`: the raw `/v1/completions` endpoint of a server at `base_url`, sent the wrapped prompt
  string as it is, so base models and custom wrappers get exactly the text posbias rendered.

The SDK never retries (`max_retries=0`): `LanguageModel` does, logging each retry. The client is built on the
first call, so replaying a cache needs no key.
"""

from __future__ import annotations

import functools
from typing import Mapping

from posbias.llm import wrappers
from posbias.llm.backends.base import Answer, Backend, TransientError, api_key, is_transient_status, package_version
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

    def _call(self, create, **options):
        import openai

        try:
            return create(**options)
        except openai.APIConnectionError as err:  # timeouts included
            raise TransientError(type(err).__name__) from err
        except openai.APIStatusError as err:
            if is_transient_status(err.status_code):
                raise TransientError(f"{type(err).__name__} (HTTP {err.status_code})") from err
            raise


def _usage(response) -> tuple[int | None, int | None]:
    usage = getattr(response, "usage", None)  # some compatible servers send none
    if usage is None:
        return None, None
    return usage.prompt_tokens, usage.completion_tokens


class OpenAIChat(_OpenAIBackend):
    WRAPPERS = ("messages",)

    def complete(self, sent: list, decoding: Decoding, meta: Mapping | None = None) -> Answer:
        response = self._call(self.client.chat.completions.create, messages=sent, **self._options(decoding))
        choice = response.choices[0]
        return Answer(choice.message.content or "", choice.finish_reason, *_usage(response))


class OpenAICompletions(_OpenAIBackend):
    WRAPPERS = tuple(name for name in wrappers.WRAPPERS if name not in ("messages", "chat_template"))

    def complete(self, sent: str, decoding: Decoding, meta: Mapping | None = None) -> Answer:
        response = self._call(self.client.completions.create, prompt=sent, **self._options(decoding))
        choice = response.choices[0]
        return Answer(choice.text or "", choice.finish_reason, *_usage(response))
