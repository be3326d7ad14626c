"""A config section's declaration: the top-level key it owns, its schema fragment, and what the config layer does
with its block (checks, derivations, the accessor `CFG.<key>` returns). Each section module declares one
`SECTION` (or a stage's `config.py` its `SECTIONS`); `posbias.config.registry` lists the modules.

A schema fragment is a YAML file holding `<key>:` (the property's schema, with a `description:` on every
property) and, optionally, `$defs:` that only this section uses; `$ref`s point into the assembled schema's
`#/$defs/`."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable, Iterable

from posbias.errors import ConfigError  # raised by every section's checks (and the declarations they call)


@dataclasses.dataclass(frozen=True)
class Section:
    key: str  # the top-level config key
    schema: Path  # the fragment file
    check: Callable[[dict, list[str]], None] | None = None  # raises ConfigError, or appends to the warnings
    prepare: Callable[[dict], dict] | None = None  # on the raw data, before validation (returns the new data)
    derive: Callable[[dict], None] | None = None  # on the validated data with defaults, before every check
    accessor: Callable[[Any], Any] | None = None  # `CFG.<key>` from the Config; without one, the block itself
    # fills in the assembled schema what declarations elsewhere say (the rankers' names and arguments, the probes)
    complete_schema: Callable[[dict], dict] | None = None


def require(known: Iterable[str], value: str, key: str, what: str) -> None:
    """`key: value is not what` unless `value` is one of `known`."""
    if value not in known:
        raise ConfigError(f"{key}: {value!r} is not {what}")
