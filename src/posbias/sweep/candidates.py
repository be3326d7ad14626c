"""A sweep query's candidates: the source query's, with its relevant document replaced by the variant.

The variant takes the relevant document's place and score; when the first stage missed the relevant document,
it takes the last candidate's, so the list keeps its length and every position of one query is reranked among
exactly the same distractors.
"""

from __future__ import annotations

from typing import Mapping


def substitute(candidates: Mapping[str, float], relevant: str, variant: str) -> dict[str, float]:
    """`candidates` (doc id -> score) with `relevant`, or else the lowest-scored candidate, replaced by
    `variant` (ties broken by trec_eval's order: the larger doc id ranks first, so the smaller one is last)."""
    if not candidates:
        raise ValueError("no candidates to substitute into")
    if variant in candidates:
        raise ValueError(f"the variant {variant!r} is already a candidate")
    replaced = relevant if relevant in candidates else min(candidates, key=lambda doc: (candidates[doc], doc))
    return {variant if doc == replaced else doc: score for doc, score in candidates.items()}


def was_retrieved(candidates: Mapping[str, float], relevant: str) -> bool:
    return relevant in candidates
