"""What a language-model backend declares (`posbias.llm.declarations`, one module per family, found by its file):
its name in configs (`llm.models.<name>.backend`), its class as `"module:Class"` (imported only when a backend is
made), whether it runs the model in this process, the environment variable its API key comes from by default, and
the sentence the config schema and docs show for it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BackendDeclaration:
    name: str
    cls: str
    description: str
    local: bool = False  # runs the model in this process (a GPU job where there is one)
    key_env: str | None = None  # an API backend's key, unless the model's `api_key_env` names another variable
