"""Brevity bias (spec §2.5): the evidence sentence alone against the evidence followed by the rest of its document.

D1 = the evidence sentence; D2 = the evidence sentence, then the document's other sentences in order. Both hold
the answer and D1 is a prefix of D2, so positive t means the shorter document scored higher. Candidates: one
evidence sentence, a head with one name mentioned once, there, and no other label between the same head and
tail; then one query per document, chosen after a seeded shuffle of all candidates (the study shuffles with the
sampling seed, then keeps the first query of each title), then the sample. Under `rest: paper` (the default) the
evidence must also spell the answer and the rest mention neither head nor answer: D2's extra sentences hold "no
... additional evidence" (`position.candidate_filter`).
"""

from __future__ import annotations

from typing import Mapping

from posbias.probes.declaration import rest_of, seed_of
from posbias.probes.declarations.brevity import BREVITY
from posbias.docred.pairs import ProbePair, evidence_sentence_id, join, other_sentences
from posbias.docred.position import candidate_filter
from posbias.docred.queries import ProbeQuery
from posbias.docred.sampling import first_per_group, sample, shuffle


def brevity_candidates(queries: list[ProbeQuery], seed: int, rest: str = "paper") -> list[ProbeQuery]:
    keep = candidate_filter(rest)
    rows = [q for q in queries if keep(q)]
    return first_per_group(shuffle(rows, seed), lambda q: q.document.title)


def brevity(queries: list[ProbeQuery], n: int, seed: int, rest: str = "paper") -> list[ProbePair]:
    pairs = []
    for query in sample(brevity_candidates(queries, seed, rest), n, seed, "probes.n"):
        evidence = query.document.sentence(evidence_sentence_id(query))
        pairs.append(ProbePair(BREVITY, query.qid, query.query, evidence, join([evidence, *other_sentences(query)])))
    return pairs

# --- the probe as the stage builds it (`posbias.probes.declaration`: the `probes` section's settings) -----------

def probe_candidates(queries: list[ProbeQuery], section: Mapping) -> list[ProbeQuery]:
    return brevity_candidates(queries, seed_of(section, BREVITY), rest_of(section))


def probe_pairs(queries: list[ProbeQuery], section: Mapping, n: int, seed: int) -> list[ProbePair]:
    return brevity(queries, n, seed, rest_of(section))
