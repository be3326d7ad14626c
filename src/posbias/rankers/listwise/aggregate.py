"""Permutation self-consistency (Tang et al. 2024, "Found in the Middle: Permutation Self-Consistency Improves
Listwise Ranking in Large Language Models"): the same candidates ranked in several input orders, the rankings
aggregated into one, so that no candidate owes its place to where it entered the list.

- `input_orders`: the k orders to send. They depend only on the set of candidates and a seed, never on the order
  the candidates arrived in, so the aggregate of a deterministic model is the same whatever the first stage did.
  `shuffles` draws k independent shuffles (the paper's); `rotations` takes k cyclic rotations of one shuffle, so
  that with k = n every candidate enters at every position exactly once (a balanced design, our option);
- `borda` and `reciprocal_rank_fusion` turn the k output rankings into one score per candidate (higher is better).
  The paper aggregates by a Kemeny-style central ranking; Borda and RRF are the two the issue names, and both are
  the usual cheap stand-ins. Ties are kept as ties: the caller decides how to break them.
"""

from __future__ import annotations

import hashlib
import math
import json
from typing import Sequence

import numpy as np

ORDERS = ("shuffles", "rotations")
AGGREGATES = ("borda", "rrf")
RRF_K = 60  # Cormack et al.'s constant: a ranking's top places count, its tail barely


def input_orders(candidates: Sequence[str], k: int, seed, orders: str = "shuffles") -> list[list[str]]:
    """k orders of the candidates, from their sorted set and `seed` (any JSON value) alone."""
    if orders not in ORDERS:
        raise ValueError(f"orders must be one of {ORDERS}, got {orders!r}")
    items = sorted(candidates)
    digest = hashlib.sha256(json.dumps([seed, items]).encode("utf-8")).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    if orders == "shuffles":
        return [[items[i] for i in rng.permutation(len(items))] for _ in range(k)]
    base = [items[i] for i in rng.permutation(len(items))]
    return [base[j % len(base):] + base[:j % len(base)] for j in range(k)]


def borda(rankings: Sequence[Sequence[str]]) -> dict[str, float]:
    """Each ranking gives its item at rank r (0 first) n - 1 - r points; the points summed over rankings."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            scores[item] = scores.get(item, 0.0) + len(ranking) - 1 - rank
    return scores


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> dict[str, float]:
    """Each ranking gives its item at rank r (1 first) 1 / (k + r), summed over rankings."""
    shares: dict[str, list[float]] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            shares.setdefault(item, []).append(1.0 / (k + rank))
    # fsum: correctly rounded, so the same shares in another order make the same score (a tie stays a tie)
    return {item: math.fsum(values) for item, values in shares.items()}


def aggregate(rankings: Sequence[Sequence[str]], method: str) -> dict[str, float]:
    if method not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {AGGREGATES}, got {method!r}")
    return borda(rankings) if method == "borda" else reciprocal_rank_fusion(rankings)
