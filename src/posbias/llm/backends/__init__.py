"""The backends, one module each, made from a `ModelSpec` by `make_backend`. Each module imports its heavy
dependencies (torch, transformers, an API SDK) only when such a backend is made."""

from __future__ import annotations

from posbias.errors import InputError
from posbias.llm.backends.base import Answer, Backend, TransientError
from posbias.llm.spec import BACKENDS, LOCAL_BACKENDS, ModelSpec

__all__ = ["Answer", "Backend", "TransientError", "make_backend"]


def make_backend(spec: ModelSpec, **extras) -> Backend:
    """The backend for `spec.backend`. `extras` go to its constructor (the API backends take `http_client`,
    which tests use to answer from a fake transport)."""
    if spec.backend in LOCAL_BACKENDS:
        from posbias.llm.backends.hf import HFCausal, HFSeq2Seq

        return (HFCausal if spec.backend == "hf_causal" else HFSeq2Seq)(spec, **extras)
    if spec.backend in ("openai_chat", "openai_completions"):
        from posbias.llm.backends.openai_api import OpenAIChat, OpenAICompletions

        return (OpenAIChat if spec.backend == "openai_chat" else OpenAICompletions)(spec, **extras)
    if spec.backend == "anthropic_messages":
        from posbias.llm.backends.anthropic_api import AnthropicMessages

        return AnthropicMessages(spec, **extras)
    if spec.backend == "mock":
        from posbias.llm.backends.mock import MockBackend

        return MockBackend(spec, **extras)
    raise InputError(f"model {spec.model!r}: backend {spec.backend!r} is not one of {', '.join(BACKENDS)}")
