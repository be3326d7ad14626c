"""Training pairs, the paper's way: per query one positive and one hard negative
sampled from that query's top-k candidates."""

from __future__ import annotations

import logging
import random
from typing import Mapping

log = logging.getLogger(__name__)


class PairSampler:
    def __init__(self, qrels: Mapping[str, Mapping[str, int]], candidates: Mapping[str, Mapping[str, float]],
                 known_docs, min_grade: int = 1):
        self.positives: dict[str, list[str]] = {}
        self.negatives: dict[str, list[str]] = {}
        for qid, judged in qrels.items():
            positives = sorted(d for d, grade in judged.items() if grade >= min_grade and d in known_docs)
            negatives = sorted(d for d in candidates.get(qid, {}) if judged.get(d, 0) < min_grade)
            if positives and negatives:
                self.positives[qid], self.negatives[qid] = positives, negatives
        skipped = len(qrels) - len(self.positives)
        if not self.positives:
            raise ValueError("no training query has both a judged positive and a non-relevant candidate")
        if skipped:
            log.info("skipping %d queries without a positive or without negatives among candidates", skipped)

    @property
    def qids(self) -> list[str]:
        return sorted(self.positives)

    def epoch(self, rng: random.Random) -> list[tuple[str, str, str]]:
        """One pass over all queries in random order: (qid, positive, negative) triples."""
        qids = self.qids
        rng.shuffle(qids)
        return [(q, rng.choice(self.positives[q]), rng.choice(self.negatives[q])) for q in qids]
