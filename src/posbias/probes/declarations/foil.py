"""Foil vs evidence (spec §2.7): a short answerless foil built to exploit the biases, against the evidence buried in
unrelated text."""

from posbias.probes.declaration import ProbeDeclaration

FOIL = "foil"

PROBES = (ProbeDeclaration(FOIL, "posbias.probes.foil:probe_candidates", "posbias.probes.foil:probe_pairs"),)
