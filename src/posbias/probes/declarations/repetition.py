"""Repetition bias (spec §2.6): the evidence followed by two more head sentences, against it followed by two
sentences that mention neither head nor tail."""

from posbias.probes.declaration import ProbeDeclaration

REPETITION = "repetition"

PROBES = (ProbeDeclaration(REPETITION, "posbias.probes.repetition:probe_candidates",
                           "posbias.probes.repetition:probe_pairs"),)
