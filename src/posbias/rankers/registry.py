"""The ranker registry: names from the config map to ranker classes.

A ranker's constructor arguments are its config (`models.<name>.args`);
unknown or missing arguments are an error, never silently defaulted. Chunk
geometry is always explicit, so FirstP and MaxP cannot drift apart through a
hidden default. `build_ranker` records the arguments it checked, with the
defaults it filled in, as `ranker.args`: a checkpoint rebuilds the ranker from them.
"""

from __future__ import annotations

import inspect
from typing import Callable

from posbias.errors import InputError
from posbias.rankers.base import ChunkRanker

RANKERS: dict[str, type[ChunkRanker]] = {}


def register(name: str) -> Callable[[type], type]:
    def decorate(cls: type) -> type:
        if name in RANKERS:
            raise ValueError(f"ranker {name!r} is registered twice")
        cls.registry_name = name
        RANKERS[name] = cls
        return cls

    return decorate


def constructor_parameters(cls: type) -> dict[str, inspect.Parameter]:
    """The named constructor arguments of a ranker class, by name. A subclass that takes `**kwargs`
    and passes them on to its parent's `__init__` accepts the parent's arguments too."""
    parameters: dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        passes_on = False
        for name, spec in inspect.signature(klass.__init__).parameters.items():
            if spec.kind is inspect.Parameter.VAR_KEYWORD:
                passes_on = True
            elif name != "self" and spec.kind is not inspect.Parameter.VAR_POSITIONAL:
                parameters.setdefault(name, spec)
        if not passes_on:
            break
    return parameters


def build_ranker(name: str, args: dict) -> ChunkRanker:
    """Construct a registered ranker from its config arguments, strictly; `ranker.args` records them
    with the defaults of the arguments left out (what a checkpoint needs to rebuild it)."""
    if name not in RANKERS:
        raise InputError(f"unknown ranker {name!r}; registered: {sorted(RANKERS)}")
    cls = RANKERS[name]
    params = constructor_parameters(cls)
    required = {p for p, spec in params.items() if spec.default is inspect.Parameter.empty}
    unknown, missing = sorted(set(args) - set(params)), sorted(required - set(args))
    if unknown or missing:
        raise InputError(f"ranker {name!r}: unknown arguments {unknown}, missing arguments {missing}")
    ranker = cls(**args)
    ranker.args = {p: args[p] if p in args else spec.default for p, spec in params.items()}
    return ranker


# The rankers register themselves when their modules are imported.
from posbias.rankers import bi_encoder, chunked, interaction, long_sequence, parade_transformer  # noqa: E402,F401  (imported for their registrations)
