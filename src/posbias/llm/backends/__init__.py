"""The backends, one module each, made from a `ModelSpec` by `make_backend` through their declarations
(`posbias.llm.declarations`). Each module imports its heavy dependencies (torch, transformers, an API SDK) only
when such a backend is made."""

from __future__ import annotations

from posbias.errors import InputError
from posbias.llm.backends.base import Answer, Backend, TransientError
from posbias.llm.spec import BACKENDS, DECLARED, ModelSpec
from posbias.plugins import load

__all__ = ["Answer", "Backend", "TransientError", "make_backend"]


def make_backend(spec: ModelSpec, **extras) -> Backend:
    """The backend for `spec.backend`, its class as declared (`posbias.llm.declarations`). `extras` go to its
    constructor (the API backends take `http_client`, which tests use to answer from a fake transport)."""
    if spec.backend not in DECLARED:
        raise InputError(f"model {spec.model!r}: backend {spec.backend!r} is not one of {', '.join(BACKENDS)}")
    return load(DECLARED[spec.backend].cls)(spec, **extras)
