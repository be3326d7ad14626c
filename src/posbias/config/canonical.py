"""What jobs receive through `params:` is canonical, so that a config differing only in key order or number
spelling never reruns a job."""

from __future__ import annotations

from typing import Any, Mapping


def canonical(value: Any) -> Any:
    """`value` with mappings in sorted key order and integral floats as ints, recursively.

    Snakemake compares a job's params by their printed form, so `{b: 1, a: 2.0}` and `{a: 2, b: 1}`
    would otherwise count as a change and rerun the job."""
    if isinstance(value, Mapping):
        return {str(k): canonical(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
