"""Answer importance (spec §2.1): the document opened by the evidence sentence against one opened by a head
sentence without the answer."""

from posbias.probes.declaration import ProbeDeclaration

ANSWER_IMPORTANCE = "answer_importance"

PROBES = (ProbeDeclaration(ANSWER_IMPORTANCE, "posbias.probes.answer:probe_candidates",
                           "posbias.probes.answer:probe_pairs"),)
