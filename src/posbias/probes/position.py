"""Position bias (spec §2.2, §2.3): the same sentences with the evidence sentence moved.

- `first_last`: D1 = evidence first, then the other sentences; D2 = the other sentences, then the evidence.
  Positive t: the early evidence scored higher. Candidates: the head mentioned once, in the evidence sentence
  (`pairs.head_only_in_evidence`), documents of more than 4 sentences, the last query of each document.
- `sweep`: the evidence inserted at index k−1 of the other sentences, k = 1..positions; each position is paired
  with k = 1 (document_1 = evidence at k, document_2 = evidence first), so negative t means a bias towards the
  beginning. Candidates: as above with more than positions − 2 sentences (the study: more than 8 for 10
  positions), the last 2 queries of each document.
Both documents of a pair hold the same sentences; only the order differs.
"""

from __future__ import annotations

from posbias.probes.pairs import ProbePair, evidence_sentence_id, head_only_in_evidence, join, other_sentences
from posbias.probes.queries import ProbeQuery
from posbias.probes.sampling import last_per_group, sample

FIRST_LAST = "position_first_last"
SWEEP = "position_sweep"


def first_last_candidates(queries: list[ProbeQuery]) -> list[ProbeQuery]:
    rows = [q for q in queries if head_only_in_evidence(q) and len(q.document.sents) > 4]
    return last_per_group(rows, lambda q: q.document.title, 1)


def first_last(queries: list[ProbeQuery], n: int, seed: int) -> list[ProbePair]:
    pairs = []
    for query in sample(first_last_candidates(queries), n, seed, "probes.n"):
        evidence, others = _evidence_and_others(query)
        pairs.append(ProbePair(FIRST_LAST, query.qid, query.query, join([evidence, *others]),
                               join([*others, evidence])))
    return pairs


def sweep_candidates(queries: list[ProbeQuery], positions: int) -> list[ProbeQuery]:
    # the study's "more than 8 sentences" for 10 positions: with exactly 8 other sentences the evidence is
    # appended at both k = 9 and k = 10 (list insertion past the end appends), as in the authors' pairs
    rows = [q for q in queries if head_only_in_evidence(q) and len(q.document.sents) > positions - 2]
    return last_per_group(rows, lambda q: q.document.title, 2)


def sweep(queries: list[ProbeQuery], n: int, seed: int, positions: int = 10) -> list[ProbePair]:
    """One pair per sampled query and position k = 1..positions (k = 1 pairs the first document with itself)."""
    pairs = []
    for query in sample(sweep_candidates(queries, positions), n, seed, "probes.n"):
        evidence, others = _evidence_and_others(query)
        first = join([evidence, *others])
        for k in range(1, positions + 1):
            moved = join([*others[:k - 1], evidence, *others[k - 1:]])
            pairs.append(ProbePair(SWEEP, query.qid, query.query, moved, first, condition=str(k)))
    return pairs


def _evidence_and_others(query: ProbeQuery) -> tuple[str, list[str]]:
    return query.document.sentence(evidence_sentence_id(query)), other_sentences(query)
