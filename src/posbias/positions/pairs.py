"""The dense path's (query, document) pairs (the study's `collect_data_generic.py`, S B.4): positive
judgments only (grade >= 1), queries shuffled with a seeded `random.Random`, their documents interleaved
round-robin (every query's first document, then every query's second, ...), the first `n`. So a small `n`
still spreads over many queries instead of exhausting the first few."""

from __future__ import annotations

import random
from typing import Mapping


def positive_pairs(qrels: Mapping[str, Mapping[str, int]], n: int | None, seed: int = 0,
                   min_grade: int = 1) -> list[tuple[str, str]]:
    """(qid, doc id) pairs; queries in the qrels' order before shuffling, documents in theirs."""
    qids = [q for q in qrels if any(g >= min_grade for g in qrels[q].values())]
    random.Random(seed).shuffle(qids)
    queues = [[d for d, g in qrels[q].items() if g >= min_grade] for q in qids]
    pairs, depth = [], 0
    while any(depth < len(queue) for queue in queues):
        pairs += [(q, queue[depth]) for q, queue in zip(qids, queues) if depth < len(queue)]
        depth += 1
    return pairs if n is None else pairs[:n]
