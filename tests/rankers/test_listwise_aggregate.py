"""Permutation self-consistency's pieces: input orders drawn from the candidate set alone, Borda and RRF."""

from __future__ import annotations

import pytest

from posbias.rankers.listwise.aggregate import aggregate, borda, input_orders, reciprocal_rank_fusion


def test_the_input_orders_depend_on_the_candidates_not_on_their_arrival():
    arrived = ["c", "a", "d", "b"]
    assert input_orders(arrived, 3, 0) == input_orders(sorted(arrived), 3, 0) == input_orders(arrived[::-1], 3, 0)
    assert input_orders(arrived, 3, 0) != input_orders(arrived, 3, 1)  # the seed draws them
    for order in input_orders(arrived, 3, 0):
        assert sorted(order) == sorted(arrived)


def test_rotations_put_every_candidate_at_every_position_once():
    orders = input_orders(["a", "b", "c", "d"], 4, 7, "rotations")
    for position in range(4):
        assert sorted(order[position] for order in orders) == ["a", "b", "c", "d"]


def test_borda_and_rrf_by_hand():
    rankings = [["a", "b", "c"], ["b", "a", "c"], ["a", "c", "b"]]
    assert borda(rankings) == {"a": 2 + 1 + 2, "b": 1 + 2 + 0, "c": 0 + 0 + 1}
    fused = reciprocal_rank_fusion(rankings)
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 63 + 1 / 62)
    # the same ranks in another order make the same score, to the bit: a tie stays a tie
    balanced = reciprocal_rank_fusion([["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]])
    assert balanced["a"] == balanced["b"] == balanced["c"]
    with pytest.raises(ValueError, match="aggregate must be one of"):
        aggregate(rankings, "kemeny")
