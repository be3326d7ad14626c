"""Training pairs, the paper's way: per query one positive and one hard negative sampled from that
query's top-k candidates.

By default every step draws its negative from all of the query's non-relevant candidates. The
study's authors instead pre-sampled a few negatives per query once (5 of the top 100 for MS MARCO,
100 of the top 1000 for Robust04) and drew each step's negative from those: `presampled_negatives`.

Documents are numbers in a token store (their position in doc-id order), held as int arrays: at
MS MARCO scale (367k queries x top 100) the candidates take 4 bytes each, not a Python object.
"""

from __future__ import annotations

import hashlib
import logging
import random
from array import array
from typing import Iterable, Mapping

import numpy as np

from posbias.data.token_store import TokenStore
from posbias.errors import InputError
from posbias.io import batched

log = logging.getLogger(__name__)

LOOKUP_BLOCK = 100_000  # run lines whose documents are looked up in the store together


def candidate_numbers(entries: Iterable[tuple[str, str]], store: TokenStore, keep: set[str],
                      source: str) -> dict[str, np.ndarray]:
    """Each kept query's candidates as store numbers, from (qid, doc id) pairs read as a stream.

    A candidate missing from the store is an error naming `source` (the run) and the document.
    """
    numbers: dict[str, array] = {}
    for block in batched(((q, d) for q, d in entries if q in keep), LOOKUP_BLOCK):
        found = store.numbers([d for _, d in block], what=f"candidate documents of {source}")
        for (qid, _), number in zip(block, found):
            numbers.setdefault(qid, array("i")).append(int(number))
    return {qid: np.frombuffer(values, dtype=np.int32) for qid, values in numbers.items()}


def ranked_negatives(candidates: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """The candidates that are not relevant, each once, in the candidates' (the run's) order."""
    negatives = candidates[~np.isin(candidates, relevant)]
    _, first = np.unique(negatives, return_index=True)
    return negatives[np.sort(first)]


def presampled_negatives(ranked: Mapping[str, np.ndarray], pool_depth: int, per_query: int,
                         seed: int) -> dict[str, np.ndarray]:
    """Per query, `per_query` negatives drawn without replacement from its first `pool_depth` (all of
    them where it has fewer), queries taken in sorted order from one generator seeded with `seed`."""
    rng = np.random.default_rng(seed)
    chosen = {}
    for qid in sorted(ranked):
        pool = ranked[qid][:pool_depth]
        chosen[qid] = np.sort(rng.choice(pool, size=min(per_query, len(pool)), replace=False))
    short = sum(len(pool) < per_query for pool in chosen.values())
    log.info("pre-sampled %d negatives per query from the top %d non-relevant candidates (%d queries have fewer)",
             per_query, pool_depth, short)
    return chosen


class PairSampler:
    def __init__(self, qrels: Mapping[str, Mapping[str, int]], candidates: Mapping[str, np.ndarray],
                 store: TokenStore, min_grade: int = 1, negatives: Mapping[str, int] | None = None,
                 seed: int = 0):
        """`candidates`: each query's candidate numbers (`candidate_numbers`), in the run's order. Judged
        documents the store lacks are skipped (a judgment can name a document the collection does not have).
        `negatives` ({pool_depth, per_query}, `TrainingSettings.negatives`) pre-samples each query's
        negatives once, seeded with `seed`; without it, every non-relevant candidate is a negative."""
        self.positives: dict[str, np.ndarray] = {}
        self.negatives: dict[str, np.ndarray] = {}
        unknown_positives = 0
        for qid, judged in qrels.items():
            relevant_ids = [d for d, grade in judged.items() if grade >= min_grade]
            relevant = store.find(relevant_ids)
            unknown_positives += int((relevant < 0).sum())
            relevant = np.unique(relevant[relevant >= 0]).astype(np.int32)  # sorted: numbers follow doc-id order
            pool = candidates.get(qid, np.empty(0, np.int32))
            # the pre-sampling needs the run's order (its top candidates); the default keeps sorted numbers
            non_relevant = ranked_negatives(pool, relevant) if negatives else np.setdiff1d(pool, relevant)
            if len(relevant) and len(non_relevant):
                self.positives[qid], self.negatives[qid] = relevant, non_relevant
        if not self.positives:
            raise InputError("no training query has both a judged positive and a non-relevant candidate")
        skipped = len(qrels) - len(self.positives)
        if skipped:
            log.info("skipping %d queries without a positive or without negatives among candidates", skipped)
        if unknown_positives:
            log.warning("%d relevant judgments name documents that are not in the collection", unknown_positives)
        if negatives:
            self.negatives = presampled_negatives(self.negatives, negatives["pool_depth"], negatives["per_query"],
                                                  seed)

    @property
    def qids(self) -> list[str]:
        return sorted(self.positives)

    def fingerprint(self) -> str:
        """A hash of every query's positives and negatives: a saved training state belongs to these pairs."""
        digest = hashlib.sha256()
        for qid in self.qids:
            digest.update(qid.encode("utf-8") + b"\0")
            digest.update(self.positives[qid].tobytes() + b"\1" + self.negatives[qid].tobytes())
        return digest.hexdigest()[:16]

    def epoch(self, rng: random.Random, repeats: int = 1) -> list[tuple[str, int, int]]:
        """One pass over all queries, each `repeats` times, in random order: (qid, positive, negative)
        triples of store numbers, each visit with its own draw of positive and negative."""
        qids = self.qids * repeats
        rng.shuffle(qids)
        return [(q, int(rng.choice(self.positives[q])), int(rng.choice(self.negatives[q]))) for q in qids]
