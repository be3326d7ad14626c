"""Literal bias (spec §2.4): the same fact asked and stated with the head's long or short name."""

from posbias.probes.declaration import ProbeDeclaration

LITERAL = "literal"

PROBES = (ProbeDeclaration(LITERAL, "posbias.probes.literal:probe_candidates", "posbias.probes.literal:probe_pairs"),)
