"""Linear fusion of BM25 and cosine scores, checked by hand on small examples."""

import math

import pytest

from posbias.retrieval.fusion import fuse, fuse_query, min_max


def test_min_max_maps_best_to_one_worst_to_zero_and_constant_to_zero():
    assert min_max({"a": 2.0, "b": 4.0, "c": 3.0}) == {"a": 0.0, "b": 1.0, "c": 0.5}
    assert min_max({"a": 7.0, "b": 7.0}) == {"a": 0.0, "b": 0.0}
    assert min_max({"a": -1.0}) == {"a": 0.0}
    assert min_max({}) == {}


def test_fuse_query_by_hand():
    bm25 = {"a": 10.0, "b": 6.0, "c": 2.0}      # normalised: a 1, b 0.5, c 0
    cosine = {"a": 0.2, "b": 0.6, "c": 0.4}     # normalised: a 0, b 1, c 0.5
    fused = fuse_query(bm25, cosine, weight=0.25)
    expected = {"a": 0.25 * 1 + 0.75 * 0, "b": 0.25 * 0.5 + 0.75 * 1, "c": 0.25 * 0 + 0.75 * 0.5}
    assert fused == pytest.approx(expected)
    assert fuse_query(bm25, cosine, weight=1.0) == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.0})
    assert fuse_query(bm25, cosine, weight=0.0) == pytest.approx({"a": 0.0, "b": 1.0, "c": 0.5})


def test_missing_bm25_gets_the_query_minimum_and_other_documents_are_ignored():
    bm25 = {"a": 8.0, "b": 4.0, "z": 100.0}     # z is no candidate: it must not stretch the range
    cosine = {"a": 0.5, "b": 0.5, "c": 0.9}     # c has no BM25 score: it gets 4.0, the minimum
    fused = fuse_query(bm25, cosine, weight=0.5)
    # BM25 normalised over {8, 4, 4}: a 1, b 0, c 0; cosine over {0.5, 0.5, 0.9}: a 0, b 0, c 1.
    assert fused == pytest.approx({"a": 0.5, "b": 0.0, "c": 0.5})


def test_constant_lists_contribute_nothing():
    assert fuse_query({"a": 3.0, "b": 3.0}, {"a": 0.1, "b": 0.9}, weight=0.5) == pytest.approx({"a": 0.0, "b": 0.5})
    assert fuse_query({}, {"a": 0.1, "b": 0.9}, weight=0.5) == pytest.approx({"a": 0.0, "b": 0.5})
    assert fuse_query({"a": 2.0}, {"a": 0.3}, weight=0.5) == {"a": 0.0}


def test_fuse_runs_per_query_and_keeps_queries_missing_from_bm25():
    cosine_run = {"q1": {"a": 0.1, "b": 0.3}, "q2": {"c": 0.2, "d": 0.4}}
    bm25_run = {"q1": {"a": 5.0, "b": 1.0}}
    fused = fuse(bm25_run, cosine_run, weight=0.5)
    assert fused["q1"] == pytest.approx({"a": 0.5, "b": 0.5})
    assert fused["q2"] == pytest.approx({"c": 0.0, "d": 0.5})  # no BM25 at all: cosine alone, halved


@pytest.mark.parametrize("weight", [-0.1, 1.5, math.nan, "0.5", True])
def test_weight_outside_unit_interval_is_rejected(weight):
    with pytest.raises(ValueError, match="fusion weight"):
        fuse({}, {"q": {"a": 1.0}}, weight)
