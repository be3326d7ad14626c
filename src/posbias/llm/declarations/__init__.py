"""Every language-model backend's declaration (`posbias.llm.declaration`), one module per family. A module of this
package that defines `BACKENDS` is found by its file (`posbias.plugins`): a new backend is its class's module under
`posbias.llm.backends` and its declaration here. The order is the schema's `backend` enum: the families below, then
any other by its module's name."""

from __future__ import annotations

from posbias.plugins import declared

ESTABLISHED = ("hf", "openai", "anthropic", "mock")

DECLARATIONS = declared(__name__, "BACKENDS", ESTABLISHED)
