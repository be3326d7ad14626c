"""Linear fusion of BM25 and cosine scores, one query at a time.

A query's candidate set is the set of documents with a cosine score (the dense
k-NN candidates); BM25 scores of other documents are ignored. For each query:

1. A candidate without a BM25 score gets the lowest BM25 score among the
   query's candidates (0 after normalisation). If none has one, all get 0.
2. Each score list is min-max normalised over the candidate set:
   `(s - min) / (max - min)`, so the best candidate gets 1 and the worst 0.
   A constant list (max == min, e.g. a single candidate) maps to 0 everywhere,
   so it cannot favour any candidate.
3. `fused = weight * bm25_norm + (1 - weight) * cosine_norm`, with the BM25
   weight in [0, 1] (1: BM25 only, 0: cosine only).
"""

from __future__ import annotations

import math
from typing import Mapping

from posbias.errors import InputError

Scores = Mapping[str, float]


def check_weight(weight: float) -> float:
    is_number = isinstance(weight, (int, float)) and not isinstance(weight, bool)
    if not is_number or math.isnan(weight) or not 0.0 <= weight <= 1.0:
        raise InputError(f"fusion weight (of BM25) must be a number in [0, 1], got {weight!r}")
    return float(weight)


def min_max(scores: Scores) -> dict[str, float]:
    """Scores rescaled to [0, 1]; a constant list maps to 0."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high == low:
        return {doc_id: 0.0 for doc_id in scores}
    return {doc_id: (score - low) / (high - low) for doc_id, score in scores.items()}


def bm25_over_candidates(bm25: Scores, candidates: Scores) -> dict[str, float]:
    """The candidates' BM25 scores, a missing one replaced by the lowest among the candidates."""
    present = [bm25[doc_id] for doc_id in candidates if doc_id in bm25]
    floor = min(present) if present else 0.0
    return {doc_id: bm25.get(doc_id, floor) for doc_id in candidates}


def fuse_query(bm25: Scores, cosine: Scores, weight: float) -> dict[str, float]:
    """Fused scores of one query's candidates (the documents in `cosine`)."""
    weight = check_weight(weight)
    bm25_norm = min_max(bm25_over_candidates(bm25, cosine))
    cosine_norm = min_max(cosine)
    return {doc_id: weight * bm25_norm[doc_id] + (1.0 - weight) * cosine_norm[doc_id] for doc_id in cosine}


def fuse(bm25_run: Mapping[str, Scores], cosine_run: Mapping[str, Scores],
         weight: float) -> dict[str, dict[str, float]]:
    """Fused scores for every query of the cosine run; a query missing from the BM25 run gets BM25 = 0."""
    check_weight(weight)
    return {qid: fuse_query(bm25_run.get(qid, {}), cosine, weight) for qid, cosine in cosine_run.items()}
