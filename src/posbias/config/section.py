"""A config section's declaration: the top-level key it owns, its schema fragment, and what the config layer does
with its block (checks, derivations, the accessor `CFG.<key>` returns). Each section module declares one
`SECTION`; `posbias.config.registry` lists the modules. An analysis stage's section also names the stage's rules
file and its targets (`Stage`): the Snakefile reads them from the registry, so a new stage does not edit it.

A schema fragment is a YAML file holding `<key>:` (the property's schema, with a `description:` on every
property) and, optionally, `$defs:` that only this section uses; `$ref`s point into the assembled schema's
`#/$defs/`."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable, Iterable

from posbias.errors import InputError


class ConfigError(InputError):
    """A config problem; the message starts with the file or the key it is about."""


@dataclasses.dataclass(frozen=True)
class Stage:
    """What an analysis stage adds to the workflow besides its config section (its commands are its folder's
    `cli.py`, found through `posbias.config.registry.STAGES`)."""

    rules: str  # its rules file, from the repository root (the Snakefile includes it): "rules/sweep.smk"
    reported: str  # the list of targets its rules file defines for `rule all`: "SWEEP_REPORTED"


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
    stage: Stage | None = None  # set by an analysis stage's section


def require(known: Iterable[str], value: str, key: str, what: str) -> None:
    """`key: value is not what` unless `value` is one of `known`."""
    if value not in known:
        raise ConfigError(f"{key}: {value!r} is not {what}")
