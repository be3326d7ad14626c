"""Every bias probe by name, in the probe table's order, with what the config gives it: whether it runs unless
the config lists probes itself, and whether it samples with a seed of its own (`probes.seeds.<name>`).

The config schema's list of probes and seeds, and the steps' list of probes, are read from here
(`with_probes`, `posbias.probes.steps.probe_names`). It imports nothing heavy, so the workflow reads it when it
builds its graph.
"""

from __future__ import annotations

from dataclasses import dataclass

from posbias.docred.probe_names import FIRST_LAST, SWEEP  # the position probes, whose pairs the domain builds

ANSWER_IMPORTANCE = "answer_importance"
LITERAL = "literal"
BREVITY = "brevity"
REPETITION = "repetition"
FOIL = "foil"
POISON = "poison"


@dataclass(frozen=True)
class ProbeDeclaration:
    name: str
    by_default: bool = True  # in the default `probes.probes`
    seeded: bool = True  # samples with `probes.seeds.<name>` (else another probe's seed)


PROBES = (
    ProbeDeclaration(ANSWER_IMPORTANCE),
    ProbeDeclaration(FIRST_LAST),
    ProbeDeclaration(SWEEP),
    ProbeDeclaration(LITERAL),
    ProbeDeclaration(BREVITY),
    ProbeDeclaration(REPETITION),
    ProbeDeclaration(FOIL),
    # off by default: it needs `probes.poison`, where its wrong entities come from; it poisons the foil's sample
    ProbeDeclaration(POISON, by_default=False, seeded=False),
)


def with_probes(schema: dict) -> dict:
    """`schema` (the parsed config schema) with the probes' names in `probes.probes` (all of them, and the
    default list) and their seeds in `probes.seeds`."""
    section = schema["properties"]["probes"]["properties"]
    section["probes"]["items"] = {"enum": [probe.name for probe in PROBES]}
    section["probes"]["default"] = [probe.name for probe in PROBES if probe.by_default]
    section["seeds"]["properties"].update({probe.name: {"type": "integer"} for probe in PROBES if probe.seeded})
    return schema
