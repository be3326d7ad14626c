"""Strict construction of settings dataclasses from config sections: unknown or missing keys are errors
(`InputError`s naming the section); and the fingerprint of a job's settings, by which a resumable job (training,
an index build, a dense encoding) knows that partial work was made under the same ones."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Mapping, TypeVar

from posbias.errors import InputError

T = TypeVar("T")


def from_section(cls: type[T], section: Mapping, what: str) -> T:
    """`cls(**section)`, refusing keys `cls` does not have and required keys the section lacks, by name."""
    fields = dataclasses.fields(cls)
    names = {f.name for f in fields}
    required = {f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    unknown, missing = sorted(set(section) - names), sorted(required - set(section))
    if unknown or missing:
        raise InputError(f"{what}: unknown keys {unknown}, missing keys {missing}; known: {sorted(names)}")
    return cls(**section)


def fingerprint(**parts) -> str:
    """A short hash of the settings `parts` (JSON, keys sorted; anything else by its `str`)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]
