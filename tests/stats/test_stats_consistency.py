"""A judge's position consistency: agreement with its Wilson interval and the clustered sign-flip test, on
decisions whose counts are known."""

from __future__ import annotations

import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from posbias.stats.consistency import order_consistency


def test_agreement_interval_and_mcnemar_are_exact():
    # 10 items: 6 positive as written; reordered, 3 of them turn negative and 1 negative turns positive
    original = [True] * 6 + [False] * 4
    reordered = [False] * 3 + [True] * 3 + [True] + [False] * 3
    found = order_consistency(original, reordered, range(10))  # one item per cluster: the exact McNemar test
    low, high = proportion_confint(6, 10, alpha=0.05, method="wilson")
    assert found == pytest.approx({
        "n": 10, "agree": 6, "agreement": 0.6, "ci_low": low, "ci_high": high, "positive_original": 6,
        "positive_reordered": 4, "only_original": 3, "only_reordered": 1,
        "mcnemar_p": mcnemar([[3, 3], [1, 3]], exact=True).pvalue, "clusters": 10,
        "test": "clustered sign-flip over 10 clusters"})
    assert found["mcnemar_p"] == pytest.approx(2 * (1 + 4) / 16)  # binomial: 1 of 4 discordant, two-sided


def test_a_judge_that_never_changes_its_mind_has_no_test_and_nothing_has_no_numbers():
    same = order_consistency([True, False, True], [True, False, True], ["a", "b", "c"])
    assert (same["agreement"], same["only_original"], same["only_reordered"]) == (1.0, 0, 0)
    assert same["mcnemar_p"] is None  # no discordant item: nothing to test (JSON null, not p = 1)
    assert same["ci_low"] == pytest.approx(proportion_confint(3, 3, method="wilson")[0])
    empty = order_consistency([], [], [])
    assert empty["n"] == 0 and empty["agreement"] is empty["ci_low"] is empty["mcnemar_p"] is None
    assert empty["clusters"] == 0


def test_every_flip_one_way_is_the_binomial_tail():
    found = order_consistency([True] * 5 + [False] * 5, [False] * 10, range(10))
    assert (found["agree"], found["only_original"], found["only_reordered"]) == (5, 5, 0)
    assert found["mcnemar_p"] == pytest.approx(2 / 2 ** 5)


def test_items_that_share_a_cluster_count_once():
    # 12 chunks relevant only as written, but 3 documents (each judged for one query) hold 4 of them each: the
    # exact McNemar test would say 2 / 2**12 as if the 12 were independent; 3 clusters all one way say 2 / 2**3.
    clusters = [("q1", "d1")] * 4 + [("q1", "d2")] * 4 + [("q2", "d1")] * 4 + [("q3", "d3")] * 3
    found = order_consistency([True] * 12 + [False] * 3, [False] * 15, clusters)
    assert (found["only_original"], found["only_reordered"], found["clusters"]) == (12, 0, 4)
    assert found["mcnemar_p"] == pytest.approx(2 / 2 ** 3)
    assert found["test"] == "clustered sign-flip over 4 clusters"


def test_unequal_lengths_are_refused():
    with pytest.raises(ValueError, match="2 decisions in the original order against 1"):
        order_consistency([True, False], [True], ["a", "b"])
    with pytest.raises(ValueError, match="1 cluster keys for 2 items"):
        order_consistency([True, False], [True, True], ["a"])
