"""Training pairs, the paper's way: per query one positive and one hard negative sampled from that
query's top-k candidates.

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


class PairSampler:
    def __init__(self, qrels: Mapping[str, Mapping[str, int]], candidates: Mapping[str, np.ndarray],
                 store: TokenStore, min_grade: int = 1):
        """`candidates`: each query's candidate numbers (`candidate_numbers`). Judged documents the store
        lacks are skipped (a judgment can name a document the collection does not have)."""
        self.positives: dict[str, np.ndarray] = {}
        self.negatives: dict[str, np.ndarray] = {}
        unknown_positives = 0
        for qid, judged in qrels.items():
            relevant_ids = [d for d, grade in judged.items() if grade >= min_grade]
            relevant = store.find(relevant_ids)
            unknown_positives += int((relevant < 0).sum())
            relevant = np.unique(relevant[relevant >= 0]).astype(np.int32)  # sorted: numbers follow doc-id order
            negatives = np.setdiff1d(candidates.get(qid, np.empty(0, np.int32)), relevant)
            if len(relevant) and len(negatives):
                self.positives[qid], self.negatives[qid] = relevant, negatives
        if not self.positives:
            raise InputError("no training query has both a judged positive and a non-relevant candidate")
        skipped = len(qrels) - len(self.positives)
        if skipped:
            log.info("skipping %d queries without a positive or without negatives among candidates", skipped)
        if unknown_positives:
            log.warning("%d relevant judgments name documents that are not in the collection", unknown_positives)

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

    def epoch(self, rng: random.Random) -> list[tuple[str, int, int]]:
        """One pass over all queries in random order: (qid, positive, negative) triples of store numbers."""
        qids = self.qids
        rng.shuffle(qids)
        return [(q, int(rng.choice(self.positives[q])), int(rng.choice(self.negatives[q]))) for q in qids]
