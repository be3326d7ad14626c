"""A language model's config block (`litm.models.<name>`, a RankGPT model's `args.llm`), checked strictly."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from posbias.errors import InputError
from posbias.llm.declarations import DECLARATIONS
from posbias.settings import from_section

# Every backend by name, as declared (`posbias.llm.declarations`).
DECLARED = {declaration.name: declaration for declaration in DECLARATIONS}
BACKENDS = tuple(DECLARED)
# The backends that run a model in this process (the rest call an API, or the mock answers).
LOCAL_BACKENDS = tuple(name for name, declaration in DECLARED.items() if declaration.local)
# The environment variable each API backend reads its key from, unless `api_key_env` names another.
DEFAULT_KEY_ENV = {name: declaration.key_env for name, declaration in DECLARED.items() if declaration.key_env}


@dataclass(frozen=True)
class ModelSpec:
    """How to reach one language model.

    - `backend`: one of `BACKENDS`;
    - `model`: a local directory or `offline:` name (hf_*), an API model name, or for `mock` its kind
      (`oracle`, `order_biased`, `first_item`, `u_curve`, `echo`, `identity`, `reverse`);
    - `revision`: the weights' revision or hash, part of the cache key (API models: the dated model name is it);
    - `wrapper`: how a raw prompt becomes what is sent (`posbias.llm.wrappers`); always explicit;
    - `base_url`: an OpenAI-compatible server (vLLM, llama.cpp server, TGI); `api_key_env`: the environment
      variable holding the key (the key itself never appears in a config, a log, a cache or a result);
    - `context`: the model's context window in tokens (prompts longer than that are refused), null = unchecked;
    - `max_retries`, `retry_wait_s`, `timeout_s`: how long an API call may keep failing: each call waits at most
      `timeout_s` seconds for an answer, a transient failure is retried `max_retries` times after waits of
      `retry_wait_s`, doubling (`posbias.llm.generate`);
    - `options`: backend-specific extras (mock parameters, dtype, device, trust_remote_code, ...).
    """

    backend: str
    model: str
    wrapper: str = "none"
    revision: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    context: int | None = None
    max_retries: int = 3
    retry_wait_s: float = 10.0
    timeout_s: float = 120.0
    options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, section: Mapping, what: str) -> "ModelSpec":
        spec = from_section(cls, dict(section), what)
        if spec.backend not in BACKENDS:
            raise InputError(f"{what}.backend: {spec.backend!r} is not one of {', '.join(BACKENDS)}")
        for name, smallest, above in (("max_retries", 0, False), ("retry_wait_s", 0, False), ("timeout_s", 0, True)):
            check_setting(f"{what}.{name}", getattr(spec, name), smallest, above, whole=name == "max_retries")
        return spec

    @property
    def key_env(self) -> str | None:
        return self.api_key_env or DEFAULT_KEY_ENV.get(self.backend)


def check_setting(label: str, value, smallest: float, above: bool, whole: bool = False) -> None:
    """A retry or timeout setting is a finite number (a whole one for `whole`) of at least `smallest` (above it
    when `above`); anything else is an InputError naming it (`label`: its config key path)."""
    kind = int if whole else (int, float)
    fits = (isinstance(value, kind) and not isinstance(value, bool) and math.isfinite(value)
            and (value > smallest if above else value >= smallest))
    if not fits:
        bound = f"{'above' if above else 'of at least'} {smallest}"
        raise InputError(f"{label} must be a {'whole number' if whole else 'finite number'} {bound}, got {value!r}")
