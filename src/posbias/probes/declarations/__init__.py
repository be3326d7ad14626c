"""Every bias probe's declaration (`posbias.probes.declaration`), one module per probe (the two position probes
share one). A module of this package that defines `PROBES` is found by its file (`posbias.plugins`): a new probe is
its module (the pairs and their candidates) and its declaration here. The order is the probe table's and the
schema's: the probes below, then any other by its module's name; poison, off by default, comes last.

It imports nothing heavy, so the workflow reads it when it builds its graph (the schema's list of probes and seeds,
`with_probes`)."""

from __future__ import annotations

from posbias.plugins import declared

ESTABLISHED = ("answer_importance", "position", "literal", "brevity", "repetition", "foil")
LAST = ("poison",)


def _ordered() -> tuple:
    found = declared(__name__, "PROBES", ESTABLISHED)
    return (*(p for p in found if p.name not in LAST), *(p for p in found if p.name in LAST))


PROBES = _ordered()


def with_probes(schema: dict) -> dict:
    """`schema` (the parsed config schema) with the probes' names in `probes.probes` (all of them, and the
    default list) and their seeds in `probes.seeds`."""
    section = schema["properties"]["probes"]["properties"]
    section["probes"]["items"] = {"enum": [probe.name for probe in PROBES]}
    section["probes"]["default"] = [probe.name for probe in PROBES if probe.by_default]
    section["seeds"]["properties"].update({probe.name: {"type": "integer"} for probe in PROBES if probe.seeded})
    return schema
