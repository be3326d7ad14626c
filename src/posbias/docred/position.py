"""Position bias (spec §2.2, §2.3): the same sentences with the evidence sentence moved.

- `first_last`: D1 = evidence first, then the other sentences; D2 = the other sentences, then the evidence.
  Positive t: the early evidence scored higher. Candidates: the head mentioned once, in the evidence sentence
  (`pairs.head_only_in_evidence`), documents of more than 4 sentences, the last query of each document.
- `sweep`: the evidence inserted at index k−1 of the other sentences, k = 1..positions; each position is paired
  with k = 1 (document_1 = evidence at k, document_2 = evidence first), so negative t means a bias towards the
  beginning. Candidates: as above with more than positions − 2 sentences (the study: more than 8 for 10
  positions), the last 2 queries of each document.
Both documents of a pair hold the same sentences; only the order differs.

`rest` (`probes.variants.rest`): `paper` (the default) keeps a query only if its evidence sentence spells the
answer and no other sentence mentions the head or the answer (`pairs.evidence_alone_holds_the_fact`: the moved or
kept rest must hold no evidence), and the sweep only documents with at least `positions` sentences, so that every
position k puts the evidence at a distinct place. `authors` filters the head's annotated mentions only and keeps
the study's "more than positions - 2 sentences", where the last position repeats the one before.
"""

from __future__ import annotations

from posbias.docred.pairs import (ProbePair, evidence_alone_holds_the_fact, evidence_sentence_id, head_only_in_evidence,
                                  join, other_sentences)
from posbias.docred.probe_names import FIRST_LAST, SWEEP
from posbias.docred.queries import ProbeQuery
from posbias.docred.sampling import last_per_group, sample

REST_VARIANTS = ("paper", "authors")


def candidate_filter(rest: str):
    """The query filter of the position and brevity probes under `probes.variants.rest`."""
    if rest not in REST_VARIANTS:
        raise ValueError(f"probes.variants.rest: {rest!r} is not one of {', '.join(REST_VARIANTS)}")
    return evidence_alone_holds_the_fact if rest == "paper" else head_only_in_evidence


def first_last_candidates(queries: list[ProbeQuery], rest: str = "paper") -> list[ProbeQuery]:
    keep = candidate_filter(rest)
    rows = [q for q in queries if keep(q) and len(q.document.sents) > 4]
    return last_per_group(rows, lambda q: q.document.title, 1)


def first_last(queries: list[ProbeQuery], n: int, seed: int, rest: str = "paper") -> list[ProbePair]:
    pairs = []
    for query in sample(first_last_candidates(queries, rest), n, seed, "probes.n"):
        evidence, others = _evidence_and_others(query)
        pairs.append(ProbePair(FIRST_LAST, query.qid, query.query, join([evidence, *others]),
                               join([*others, evidence])))
    return pairs


def sweep_candidates(queries: list[ProbeQuery], positions: int, rest: str = "paper") -> list[ProbeQuery]:
    # authors: the study's "more than 8 sentences" for 10 positions: with exactly 8 other sentences the evidence
    # is appended at both k = 9 and k = 10 (list insertion past the end appends), so two positions are one
    # document. paper: at least `positions` sentences, so the evidence has a place of its own at every k.
    keep = candidate_filter(rest)
    least = positions if rest == "paper" else positions - 1
    rows = [q for q in queries if keep(q) and len(q.document.sents) >= least]
    return last_per_group(rows, lambda q: q.document.title, 2)


def sweep(queries: list[ProbeQuery], n: int, seed: int, positions: int = 10, rest: str = "paper") -> list[ProbePair]:
    """One pair per sampled query and position k = 1..positions (k = 1 pairs the first document with itself)."""
    pairs = []
    for query in sample(sweep_candidates(queries, positions, rest), n, seed, "probes.n"):
        evidence, others = _evidence_and_others(query)
        first = join([evidence, *others])
        for k in range(1, positions + 1):
            moved = join([*others[:k - 1], evidence, *others[k - 1:]])
            pairs.append(ProbePair(SWEEP, query.qid, query.query, moved, first, condition=str(k)))
    return pairs


def _evidence_and_others(query: ProbeQuery) -> tuple[str, list[str]]:
    return query.document.sentence(evidence_sentence_id(query)), other_sentences(query)
