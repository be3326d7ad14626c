"""Poison vs evidence (spec §2.8): the foil with a poisoned evidence sentence appended, against the evidence. Off by
default: it needs `probes.poison` (where the wrong entities come from), and the steps build it from the foil's
sample, so it names no functions of its own."""

from posbias.probes.declaration import ProbeDeclaration

POISON = "poison"

PROBES = (ProbeDeclaration(POISON, by_default=False, seeded=False),)
