"""What every backend offers: its identity (the cache-key fields that name the model), rendering a request
into what it sends, and one call answering one sent prompt."""

from __future__ import annotations

import importlib.metadata
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Mapping

from posbias.errors import InputError
from posbias.llm import wrappers
from posbias.llm.spec import ModelSpec
from posbias.llm.types import Decoding, Request


@dataclass(frozen=True)
class Answer:
    """One call's answer, before timing and caching."""

    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None


class TransientError(Exception):
    """A failure worth retrying (connection, timeout, rate limit, server error, an answer that is not the API's).
    The message is the call's status, written by posbias (error type, HTTP status, content type), never copied
    from a request or a response, so it holds no secret."""


class Backend(ABC):
    """One model behind one backend. Subclasses name the wrappers they can send (`WRAPPERS`) and the
    `spec.options` they read (`OPTIONS`); both are checked when the backend is made."""

    WRAPPERS: tuple[str, ...] = wrappers.WRAPPERS
    OPTIONS: tuple[str, ...] = ()

    def __init__(self, spec: ModelSpec):
        self.spec = spec
        wrappers.check(spec.wrapper)
        if spec.wrapper not in self.WRAPPERS:
            raise InputError(f"model {spec.model!r}: backend {spec.backend} takes the wrapper(s) "
                             f"{', '.join(self.WRAPPERS)}, not {spec.wrapper!r}")
        unknown = sorted(set(spec.options) - set(self.OPTIONS))
        if unknown:
            raise InputError(f"model {spec.model!r}: backend {spec.backend} has no options {unknown}; "
                             f"known: {list(self.OPTIONS)}")

    def identity(self) -> dict:
        """The cache-key fields that name the model (all but what is sent and the decoding settings)."""
        return {"backend": self.spec.backend, "model": self.spec.model, "revision": self.spec.revision,
                "wrapper": self.spec.wrapper}

    def key_fields(self, request: Request) -> dict:
        """Further key fields taken from the request itself (only the mock, which answers from `meta`)."""
        return {}

    def render(self, request: Request) -> str | list:
        return wrappers.render(self.spec.wrapper, request)

    def check(self, sent: str | list, decoding: Decoding) -> None:
        """Refuse what this backend cannot answer (a prompt over the context, sampling for a greedy-only
        backend) before any model is loaded or any call paid for."""

    def prepare(self) -> None:
        """Get ready to answer (load weights); called before the first timed call, never on a pure replay."""

    @abstractmethod
    def complete(self, sent: str | list, decoding: Decoding, meta: Mapping | None = None) -> Answer:
        """Answer one rendered prompt. `meta` is the request's meta, read by the mock only."""

    batch_size = 1  # prompts `complete_batch` answers in one call (a local model's `options.batch_size`)

    def complete_batch(self, sents: list, decoding: Decoding, metas: list[Mapping | None]) -> list[Answer]:
        """Answer several rendered prompts (at most `batch_size`); by default one at a time."""
        return [self.complete(sent, decoding, meta) for sent, meta in zip(sents, metas, strict=True)]

    def prompt_length(self, sent: str | list) -> int:
        """How long a sent prompt is, for grouping prompts of like length into batches (a local model counts its
        tokens); a backend that answers one at a time needs no order: 0."""
        return 0

    def sdk(self) -> dict:
        """The package that made the answer and its version, recorded in the cache."""
        return package_version("posbias")

    def server(self) -> str | None:
        """Where the model answers, for messages: an API's address (never a key); None for a model run here."""
        return None


def package_version(name: str) -> dict:
    try:
        return {"name": name, "version": importlib.metadata.version(name)}
    except importlib.metadata.PackageNotFoundError:
        return {"name": name, "version": None}


def cut_at_stop(text: str, stop: tuple[str, ...]) -> tuple[str, bool]:
    """`text` up to the first occurrence of any stop string, and whether one occurred."""
    cuts = [at for at in (text.find(s) for s in stop if s) if at >= 0]
    return (text[:min(cuts)], True) if cuts else (text, False)


def require_greedy(spec: ModelSpec, decoding: Decoding) -> None:
    """Local backends decode greedily only: every study here does, and sampling would need seeds per call."""
    if decoding.temperature != 0 or decoding.top_p != 1.0:
        raise InputError(f"model {spec.model!r}: backend {spec.backend} decodes greedily only; set temperature 0 "
                         f"and top_p 1 (got temperature {decoding.temperature}, top_p {decoding.top_p})")


def api_key(spec: ModelSpec) -> str:
    """The API key from the environment variable `spec.key_env`. A local OpenAI-compatible server
    (`base_url`) ignores keys, so an unset one becomes the placeholder "EMPTY"; for a real API an unset key
    is an error naming the variable (never a value)."""
    value = os.environ.get(spec.key_env) if spec.key_env else None
    if value:
        return value
    if spec.base_url:
        return "EMPTY"
    raise InputError(f"model {spec.model!r}: the environment variable {spec.key_env} (the API key) is not set")
