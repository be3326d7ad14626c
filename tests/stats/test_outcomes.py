import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import binom_test
from statsmodels.stats.weightstats import DescrStatsW

from posbias.stats.outcomes import OutcomeBreakdown, first_relevant_rank, outcome_breakdown, rank_sum_p

# First relevant rank of run A and run B per query (None: not in the top 10).
RANKS = {
    "q01": (1, 2), "q02": (3, 1), "q03": (2, 4), "q04": (5, 5),  # both
    "q05": (None, None), "q06": (None, None),                    # neither
    "q07": (2, None), "q08": (1, None), "q09": (10, None),       # only A
    "q10": (None, 7),                                            # only B
}


def _rr(column: int) -> pd.Series:
    return pd.Series({q: 1 / r[column] if r[column] else 0.0 for q, r in RANKS.items()})


def test_first_relevant_rank():
    ranks = first_relevant_rank(pd.Series([0.0, 1.0, 0.5, 1 / 3, 0.01, 1 / 7 + 1e-9], index=list("abcdef")))
    assert str(ranks.dtype) == "Int64"
    assert ranks.isna().tolist() == [True, False, False, False, False, False]
    assert ranks.dropna().tolist() == [1, 2, 3, 100, 7]
    assert list(ranks.index) == list("abcdef")


@pytest.mark.parametrize("value", [0.4, 0.3, 1.5, -0.5, float("nan")])
def test_first_relevant_rank_rejects_other_metrics(value):
    with pytest.raises(ValueError, match="not RR@k values"):
        first_relevant_rank(pd.Series([1.0, value], index=["q1", "q2"]))


def test_outcome_breakdown_on_a_hand_built_fixture():
    rr_b = _rr(1).sample(frac=1.0, random_state=0)  # alignment is by query id
    result = outcome_breakdown(_rr(0), rr_b, k=10)
    assert (result.k, result.n_queries) == (10, 10)
    assert (result.n_neither, result.n_only_a, result.n_only_b, result.n_both) == (2, 3, 1, 4)
    assert (result.share_neither, result.share_only_a, result.share_only_b, result.share_both) == \
        (0.2, 0.3, 0.1, 0.4)
    assert result.esl_a == pytest.approx(11 / 4) and result.esl_b == pytest.approx(12 / 4)
    assert result.rr_a == pytest.approx((1 + 1 / 3 + 1 / 2 + 1 / 5) / 4)
    assert result.rr_b == pytest.approx((1 / 2 + 1 + 1 / 4 + 1 / 5) / 4)
    esl_a, esl_b = np.array([1, 3, 2, 5.0]), np.array([2, 1, 4, 5.0])
    # q04 has a zero difference; scipy drops it, as wilcoxon_signed_rank does
    assert result.esl_wilcoxon_p == pytest.approx(stats.wilcoxon(esl_a, esl_b).pvalue)
    assert result.esl_t_p == pytest.approx(DescrStatsW(esl_a - esl_b).ttest_mean()[1])
    assert result.rr_wilcoxon_p == pytest.approx(stats.wilcoxon(1 / esl_a, 1 / esl_b).pvalue)
    assert result.rr_t_p == pytest.approx(stats.ttest_rel(1 / esl_a, 1 / esl_b).pvalue)


def test_binomial_p_of_the_one_run_only_queries():
    result = outcome_breakdown(_rr(0), _rr(1), k=10)
    assert result.binomial_p == pytest.approx(stats.binomtest(3, 4, 0.5).pvalue)
    assert result.binomial_p == pytest.approx(binom_test(3, 4, 0.5))
    assert result.binomial_p == pytest.approx((1 + 4 + 4 + 1) / 16)  # P(X <= 1) + P(X >= 3), X ~ Bin(4, 1/2)
    nobody = OutcomeBreakdown(10, 2, 2, 0, 0, 0, *[float("nan")] * 8)
    assert np.isnan(nobody.binomial_p)  # no query found by one run only: no test


def test_to_dict_is_json_ready():
    out = outcome_breakdown(_rr(0), _rr(1), k=10).to_dict()
    assert out["counts"] == {"neither": 2, "only_a": 3, "only_b": 1, "both": 4}
    assert out["shares"] == {"neither": 0.2, "only_a": 0.3, "only_b": 0.1, "both": 0.4}
    assert set(out) == {"k", "n_queries", "counts", "shares", "binomial_p", "both"}
    assert set(out["both"]) == {"esl_a", "esl_b", "esl_wilcoxon_p", "esl_t_p", "rr_a", "rr_b", "rr_wilcoxon_p",
                                "rr_t_p"}
    json.dumps(out, allow_nan=False)


def test_no_both_queries_gives_nan_and_null():
    rr_a = pd.Series([1.0, 0.0, 0.0], index=["q1", "q2", "q3"])
    rr_b = pd.Series([0.0, 0.5, 0.0], index=["q1", "q2", "q3"])
    result = outcome_breakdown(rr_a, rr_b, k=10)
    assert (result.n_neither, result.n_only_a, result.n_only_b, result.n_both) == (1, 1, 1, 0)
    assert np.isnan(result.esl_a) and np.isnan(result.rr_t_p)
    assert all(value is None for value in result.to_dict()["both"].values())


def test_identical_runs():
    result = outcome_breakdown(_rr(0), _rr(0), k=10)
    assert (result.n_only_a, result.n_only_b, result.n_both) == (0, 0, 7)
    # every pair ties: no test at all (NaN), never p = 1
    assert np.isnan([result.esl_wilcoxon_p, result.esl_t_p, result.rr_wilcoxon_p, result.rr_t_p,
                     result.binomial_p]).all()
    json.dumps(result.to_dict(), allow_nan=False)


def test_ranks_beyond_k_and_different_queries_are_errors():
    with pytest.raises(ValueError, match="not RR@5 values"):
        outcome_breakdown(_rr(0), _rr(1), k=5)  # q09 is at rank 10
    with pytest.raises(ValueError, match="different queries"):
        outcome_breakdown(_rr(0), _rr(1).drop("q01"), k=10)


def test_rank_sum_p_matches_mann_whitney():
    rng = np.random.default_rng(4)
    a, b = pd.Series(rng.uniform(0, 1, 40)), pd.Series(rng.uniform(0.1, 1, 50))  # no ties; sizes may differ
    expected = stats.mannwhitneyu(a, b, method="asymptotic", use_continuity=False).pvalue
    assert rank_sum_p(a, b) == pytest.approx(expected)
    assert rank_sum_p(a, b) == pytest.approx(stats.ranksums(a, b).pvalue)  # without ties: the same


def test_rank_sum_p_with_ties_uses_the_tie_corrected_variance():
    rng = np.random.default_rng(4)
    a = pd.Series(rng.choice([0, 0, 0, 1, 1 / 2], 500))  # RR values tie heavily
    b = pd.Series(rng.choice([0, 0, 1, 1 / 2, 1 / 5], 500))
    # By hand: rank-sum z with the variance corrected for ties, two-sided normal p.
    values = np.concatenate([a, b])
    ranks = stats.rankdata(values)
    n1, n2, n = len(a), len(b), len(values)
    u = ranks[:n1].sum() - n1 * (n1 + 1) / 2
    _, counts = np.unique(values, return_counts=True)
    variance = n1 * n2 / 12 * ((n + 1) - (counts ** 3 - counts).sum() / (n * (n - 1)))
    z = (u - n1 * n2 / 2) / np.sqrt(variance)
    assert rank_sum_p(a, b) == pytest.approx(2 * stats.norm.sf(abs(z)))
    assert rank_sum_p(a, b) < stats.ranksums(a, b).pvalue  # without the correction p would be larger
