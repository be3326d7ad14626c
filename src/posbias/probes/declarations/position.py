"""The position probes: the evidence first against last, and swept through the document (their pairs are built by
the domain, `posbias.docred.position`; `posbias.probes.position` reads the section for them)."""

from posbias.docred.probe_names import FIRST_LAST, SWEEP
from posbias.probes.declaration import ProbeDeclaration

PROBES = (
    ProbeDeclaration(FIRST_LAST, "posbias.probes.position:first_last_candidates", "posbias.probes.position:first_last"),
    ProbeDeclaration(SWEEP, "posbias.probes.position:sweep_candidates", "posbias.probes.position:sweep"),
)
