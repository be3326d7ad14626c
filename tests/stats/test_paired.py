import itertools
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.weightstats import DescrStatsW

from posbias.stats.paired import (TESTS, PairedComparison, align, clustered_mcnemar, compare_paired, exact_mcnemar,
                                  paired_p_value, randomisation_test, t_test, wilcoxon_signed_rank)


def test_t_test_matches_scipy_and_is_no_test_for_identical_systems():
    rng = np.random.default_rng(0)
    y = rng.uniform(0, 1, 40)
    x = np.clip(y + rng.normal(0.05, 0.1, 40), 0, 1)
    expected = stats.ttest_rel(x, y)
    assert t_test(x, y) == (pytest.approx(expected.statistic), pytest.approx(expected.pvalue))
    assert all(np.isnan(v) for v in t_test(y, y.copy()))  # every pair ties: no test, never p = 1


def test_a_small_shift_at_a_dense_retrievers_score_scale_is_tested():
    # Scores near 380 with a consistent +0.002 shift: np.allclose (rtol 1e-5, ~0.004 here) called these identical
    # and gave t = 0, p = 1; the shift is real and scipy finds it (t = 61.8).
    rng = np.random.default_rng(0)
    y = rng.normal(380, 5, 250)
    x = y + rng.normal(0.002, 0.0005, 250)
    assert np.allclose(x, y)  # what the old check saw
    expected = stats.ttest_rel(x, y)
    assert expected.statistic == pytest.approx(61.77, abs=0.01)
    assert t_test(x, y) == (pytest.approx(expected.statistic), pytest.approx(expected.pvalue, rel=1e-6))
    a, b = pd.Series(x, index=[f"q{i}" for i in range(250)]), pd.Series(y, index=[f"q{i}" for i in range(250)])
    result = compare_paired(a, b, n_permutations=999)
    assert result.t_p == pytest.approx(expected.pvalue, rel=1e-6) and result.t_p < 1e-100
    assert result.wilcoxon_p == pytest.approx(stats.wilcoxon(x, y).pvalue) and result.randomisation_p == 1 / 1000
    assert result.ci_low > 0 and result.effect_size > 3
    assert paired_p_value("t", a, b) == pytest.approx(expected.pvalue, rel=1e-6)


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # scipy's CI on a constant difference
def test_a_constant_non_zero_shift_takes_the_exact_sign_test():
    # Two queries, both ranked 5th by one run and 1st by the other: scipy's answer would be p = 0, the old one
    # "no test" (a certain difference printed like a tie); the sign test of 2 pairs one way says 2 * 0.5**2.
    assert t_test(np.array([1 / 5, 1 / 5]), np.array([1.0, 1.0])) == (-np.inf, 0.5)
    assert t_test(np.array([0.3, 0.4 + 1e-15]), np.array([0.1, 0.2])) == (np.inf, 0.5)  # float noise in the shift
    # a deterministic model always 0.1 lower on 12 queries: 2 * 0.5**12, scipy's binomial test
    y = np.linspace(0.2, 0.9, 12)
    assert t_test(y - 0.1, y) == (-np.inf, pytest.approx(stats.binomtest(0, 12).pvalue))
    assert t_test(y - 0.1, y)[1] == pytest.approx(2 * 0.5 ** 12)
    a, b = pd.Series(y - 0.1, index=[f"q{i}" for i in range(12)]), pd.Series(y, index=[f"q{i}" for i in range(12)])
    result = compare_paired(a, b, n_permutations=999)  # its CI: scipy's, with a precision warning
    assert (result.t_statistic, result.t_p) == (-np.inf, pytest.approx(2 * 0.5 ** 12))
    assert result.to_dict()["t_test"] == {"t": None, "p": pytest.approx(2 * 0.5 ** 12)}  # inf is no JSON number
    assert paired_p_value("t", a, b) == pytest.approx(2 * 0.5 ** 12)


def test_t_test_is_no_test_when_every_pair_ties_or_one_query():
    assert all(np.isnan(v) for v in t_test(np.array([0.3, 0.3]), np.array([0.3, 0.3])))  # exact ties
    assert all(np.isnan(v) for v in t_test(np.array([0.3, 0.6]), np.array([0.1 + 0.2, 0.4 + 0.2])))  # rounding
    assert all(np.isnan(v) for v in t_test(np.array([0.3]), np.array([0.1])))  # one query: no spread to measure


def test_align_pairs_by_query_id_and_refuses_different_queries():
    a = pd.Series([0.1, 0.5], index=["q1", "q2"])
    x, y = align(a.iloc[::-1], pd.Series([0.3, 0.7], index=["q1", "q2"]))
    assert x.tolist() == [0.1, 0.5] and y.tolist() == [0.3, 0.7]
    with pytest.raises(ValueError, match="different queries"):
        align(a, pd.Series([0.1], index=["q1"]))


# --- compare_paired, randomisation and Wilcoxon tests ------------------------


def _two_systems(n=30, shift=0.05, seed=3):
    rng = np.random.default_rng(seed)
    qids = [f"q{i}" for i in range(n)]
    b = pd.Series(rng.uniform(0, 1, n), index=qids)
    a = pd.Series(b.to_numpy() + rng.normal(shift, 0.1, n), index=qids)
    return a, b


def test_compare_paired_matches_scipy_and_statsmodels():
    a, b = _two_systems()
    result = compare_paired(a.sample(frac=1.0, random_state=2), b, n_permutations=999, seed=1)
    x, y = align(a, b)  # qid order: the random sign flips are drawn in that order
    diff = x - y
    reference = DescrStatsW(diff)  # an independent implementation of the one-sample t on the differences
    t, p, _ = reference.ttest_mean()
    low, high = reference.tconfint_mean(alpha=0.05)
    assert result.n_queries == 30
    assert result.mean_a == pytest.approx(x.mean()) and result.mean_b == pytest.approx(y.mean())
    assert result.mean_difference == pytest.approx(diff.mean())
    assert (result.ci_low, result.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert result.t_statistic == pytest.approx(t) == pytest.approx(stats.ttest_rel(x, y).statistic)
    assert result.t_p == pytest.approx(p) == pytest.approx(stats.ttest_rel(x, y).pvalue)
    assert result.wilcoxon_p == pytest.approx(stats.wilcoxon(x, y).pvalue)
    assert result.effect_size == pytest.approx(diff.mean() / np.sqrt(((diff - diff.mean()) ** 2).sum() / 29))
    assert result.randomisation_p == randomisation_test(x, y, 999, 1)
    assert (result.n_permutations, result.seed) == (999, 1)


def test_compare_paired_aligns_by_query_id():
    a, b = _two_systems(n=12)
    in_order = compare_paired(a, b, n_permutations=199)
    shuffled = compare_paired(a.iloc[::-1], b.sample(frac=1.0, random_state=5), n_permutations=199)
    assert shuffled == in_order
    misaligned = compare_paired(pd.Series(a.to_numpy()[::-1], index=a.index), b, n_permutations=199)
    assert misaligned.t_p != in_order.t_p  # the pairing matters, so the test above can fail


def test_compare_paired_identical_systems_is_no_test():
    a, _ = _two_systems(n=10)
    result = compare_paired(a, a.copy())
    assert np.isnan([result.t_statistic, result.t_p, result.wilcoxon_p, result.randomisation_p]).all()
    assert (result.ci_low, result.ci_high, result.mean_difference, result.effect_size) == (0.0, 0.0, 0.0, 0.0)
    out = result.to_dict()
    assert out["t_test"] == {"t": None, "p": None} and out["wilcoxon_signed_rank"]["p"] is None
    assert out["randomisation"]["p"] is None
    for test in TESTS:
        assert np.isnan(paired_p_value(test, a, a.copy()))


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # scipy's t on a constant difference
def test_to_dict_is_nested_and_nan_is_null():
    a = pd.Series([0.5, 0.25, 1.0], index=["q1", "q2", "q3"])
    result = compare_paired(a + 0.5, a, n_permutations=100)  # constant difference: sd 0, effect size nan
    assert np.isnan(result.effect_size)
    out = result.to_dict()
    assert set(out) == {"n_queries", "mean_a", "mean_b", "mean_difference", "ci95", "t_test",
                        "wilcoxon_signed_rank", "randomisation", "effect_size"}
    # t = +inf (no JSON number); p: the sign test of 3 pairs one way, 2 * 0.5**3
    assert out["effect_size"] is None and out["t_test"] == {"t": None, "p": 0.25}
    assert out["ci95"] == [pytest.approx(0.5), pytest.approx(0.5)]
    assert out["randomisation"] == {"p": result.randomisation_p, "permutations": 100, "seed": 0}
    assert out["wilcoxon_signed_rank"] == {"p": result.wilcoxon_p}
    json.dumps(out, allow_nan=False)  # strict JSON
    assert PairedComparison(**{**result.__dict__, "t_p": float("nan")}).to_dict()["t_test"]["p"] is None


def test_randomisation_test_is_seeded():
    a, b = _two_systems(n=40, shift=0.02)
    x, y = a.to_numpy(), b.to_numpy()
    first, second = randomisation_test(x, y, 2000, seed=7), randomisation_test(x, y, 2000, seed=7)
    assert first == second
    others = {randomisation_test(x, y, 2000, seed=s) for s in range(5)}
    assert len(others) > 1  # seeds do draw different sign flips
    assert all(1 / 2001 <= p <= 1 for p in others)
    # p = (b + 1) / (N + 1): a multiple of 1 / 2001
    assert all(round(p * 2001) == pytest.approx(p * 2001) for p in others)


def test_randomisation_test_never_returns_zero():
    rng = np.random.default_rng(0)
    x = rng.normal(1.0, 0.1, 200)
    y = rng.normal(0.0, 0.1, 200)  # no sign flip comes near the observed mean difference
    assert randomisation_test(x, y, n_permutations=999, seed=0) == 1 / 1000


def test_randomisation_test_enumerates_exactly_when_it_can():
    x = np.array([0.9, 0.5, 1.0, 0.2, 0.7, 0.33, 0.0, 1.0])
    y = np.array([0.5, 0.5, 0.25, 0.3, 0.1, 0.2, 0.1, 0.5])
    diff = x - y
    observed = abs(diff.mean())
    flips = [abs((np.array(signs) * diff).mean()) for signs in itertools.product((1, -1), repeat=8)]
    expected = sum(f >= observed - 1e-12 for f in flips) / 256  # all 2**8 assignments, observed among them
    assert randomisation_test(x, y, n_permutations=10000, seed=0) == pytest.approx(expected)
    assert randomisation_test(x, y, n_permutations=10000, seed=99) == pytest.approx(expected)  # no randomness
    assert np.isnan(randomisation_test(x, x, n_permutations=10000))  # every pair ties: no test


def test_wilcoxon_signed_rank_degenerate_cases():
    x = np.array([0.2, 0.4, 0.9, 0.1, 0.5, 0.7])
    y = np.array([0.1, 0.4, 0.5, 0.3, 0.2, 0.3])
    assert wilcoxon_signed_rank(x, y) == pytest.approx(stats.wilcoxon(x, y).pvalue)
    assert np.isnan(wilcoxon_signed_rank(x, x))  # every pair ties: no test
    assert wilcoxon_signed_rank(x, np.where(np.arange(6) == 0, 0.0, x)) == 1.0  # one non-zero difference


def test_paired_p_value_picks_the_test():
    a, b = _two_systems(n=20)
    x, y = align(a, b)
    assert TESTS == ("t", "wilcoxon", "randomisation")
    assert paired_p_value("t", a, b) == pytest.approx(stats.ttest_rel(x, y).pvalue)
    assert paired_p_value("wilcoxon", a, b) == pytest.approx(stats.wilcoxon(x, y).pvalue)
    assert paired_p_value("randomisation", a, b, 500, 3) == randomisation_test(x, y, 500, 3)
    with pytest.raises(ValueError, match="t, wilcoxon, randomisation"):
        paired_p_value("sign", a, b)


def test_exact_mcnemar_matches_statsmodels_and_is_no_test_when_every_pair_ties():
    from statsmodels.stats.contingency_tables import mcnemar

    from posbias.stats.paired import exact_mcnemar

    first = pd.Series([True, True, False, True, False, None], index=list("abcdef"))
    second = pd.Series([False, False, False, True, True, True], index=list("abcdef"))
    n, only_first, only_second, p = exact_mcnemar(first, second)
    assert (n, only_first, only_second) == (5, 2, 1)  # f is unanswered in `first`: left out
    assert p == pytest.approx(mcnemar([[1, 2], [1, 1]], exact=True).pvalue)
    # right and wrong on the same questions: statsmodels says p = 1, but there is nothing to test
    assert mcnemar([[3, 0], [0, 2]], exact=True).pvalue == 1.0
    n, only_first, only_second, p = exact_mcnemar(first.iloc[:5], first.iloc[:5].copy())
    assert (n, only_first, only_second) == (5, 0, 0) and np.isnan(p)
    assert np.isnan(exact_mcnemar(pd.Series([], dtype=object), pd.Series([], dtype=object))[3])


# --- clustered McNemar --------------------------------------------------------


def test_clustered_mcnemar_with_one_item_per_cluster_is_the_exact_mcnemar_test():
    rng = np.random.default_rng(4)
    for _ in range(20):
        first, second = pd.Series(rng.random(12) < 0.6), pd.Series(rng.random(12) < 0.4)
        n, only_first, only_second, p = exact_mcnemar(first, second)
        found = clustered_mcnemar(first, second, range(12))
        assert found[:3] == (n, only_first, only_second) and found[4] == 12
        assert found[3] == pytest.approx(p) if only_first + only_second else np.isnan(found[3])
    # beyond exact enumeration: a Monte Carlo estimate, never below 1 / (N + 1)
    first, second = pd.Series([True] * 20 + [False] * 5), pd.Series([False] * 25)
    assert clustered_mcnemar(first, second, range(25), n_permutations=999)[3] == 1 / 1000


def test_clustered_mcnemar_counts_clusters_not_items():
    # 20 items right only in `first`, but in 4 clusters of 5 (chunks of one document for one query): the exact
    # McNemar test counts 20 independent pairs (p = 2 / 2**20); the evidence is 4 clusters all one way, 2 / 2**4.
    first, second = pd.Series([True] * 20 + [False] * 4), pd.Series([False] * 24)
    clusters = [("q1", f"d{i // 5}") for i in range(20)] + [("q2", "d9")] * 4
    assert exact_mcnemar(first, second)[3] == pytest.approx(2 / 2 ** 20)
    assert clustered_mcnemar(first, second, clusters) == (24, 20, 0, pytest.approx(2 / 2 ** 4), 5)
    # a cluster whose changes cancel adds nothing; one that leans the other way weighs its net change
    first, second = pd.Series([True, False, True, True, True]), pd.Series([False, True, False, False, False])
    assert clustered_mcnemar(first, second, ["a", "a", "b", "c", "d"])[3] == pytest.approx(2 / 2 ** 3)
    # d = +1, -1, +3: 6 of the 8 sign flips reach |sum| >= 3
    assert clustered_mcnemar(first, second, ["a", "b", "c", "c", "c"])[3] == pytest.approx(6 / 8)


def test_clustered_mcnemar_drops_unanswered_items_and_has_no_test_without_discordance():
    first = pd.Series([True, None, False, True], index=list("abcd"))
    second = pd.Series([False, True, False, True], index=list("abcd"))
    clusters = pd.Series(["x", "y", "y", "z"], index=list("abcd"))
    assert clustered_mcnemar(first, second, clusters) == (3, 1, 0, 1.0, 3)  # one discordant cluster: p = 1
    n, only_first, only_second, p, n_clusters = clustered_mcnemar(second, second.copy(), clusters)
    assert (n, only_first, only_second, n_clusters) == (4, 0, 0, 3) and np.isnan(p)
    with pytest.raises(ValueError, match="3 cluster keys for 4 items"):
        clustered_mcnemar(first, second, ["x", "y", "z"])
