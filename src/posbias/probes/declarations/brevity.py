"""Brevity bias (spec §2.5): the evidence sentence alone against it followed by the rest of its document."""

from posbias.probes.declaration import ProbeDeclaration

BREVITY = "brevity"

PROBES = (ProbeDeclaration(BREVITY, "posbias.probes.brevity:probe_candidates", "posbias.probes.brevity:probe_pairs"),)
