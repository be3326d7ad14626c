"""Dense pairs: positives only, queries shuffled with a seed, documents interleaved round-robin."""

from __future__ import annotations

import random

from posbias.positions.pairs import positive_pairs

QRELS = {"a": {"a1": 2, "a2": 1, "a0": 0, "a3": 1}, "b": {"b1": 1}, "c": {"c0": 0}, "d": {"d1": 3, "d2": 1}}


def test_round_robin_over_the_shuffled_queries_with_positive_documents():
    order = ["a", "b", "d"]
    random.Random(0).shuffle(order)
    pairs = positive_pairs(QRELS, None, seed=0)
    firsts = [QRELS_FIRST[q] for q in order]
    assert pairs[:3] == list(zip(order, firsts))
    assert len(pairs) == 6 and ("c", "c0") not in pairs and ("a", "a0") not in pairs
    assert pairs[-1] == ("a", "a3")  # a has the most positives: it ends the interleaving
    assert positive_pairs(QRELS, 4, seed=0) == pairs[:4]


QRELS_FIRST = {"a": "a1", "b": "b1", "d": "d1"}


def test_another_seed_gives_another_query_order():
    orders = {tuple(q for q, _ in positive_pairs(QRELS, 3, seed=s)) for s in range(10)}
    assert len(orders) > 1
