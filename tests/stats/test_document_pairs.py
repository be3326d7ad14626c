import json
import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from posbias.stats.corrections import adjust
from posbias.stats.document_pairs import ProbeStatistic, correct_together, probe_statistic


def _scores(seed: int = 0, n: int = 250, shift: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    second = rng.normal(0.5, 0.1, n)
    return second + rng.normal(shift, 0.1, n), second


# --- against scipy and statsmodels -------------------------------------------


@pytest.mark.parametrize("seed, shift", [(0, 0.05), (1, -0.02), (2, 0.0)])
def test_t_p_and_ci_match_scipy_ttest_rel(seed, shift):
    first, second = _scores(seed, shift=shift)
    expected = stats.ttest_rel(first, second)
    interval = expected.confidence_interval(0.95)
    statistic = probe_statistic(first, second)
    assert statistic.n == 250 and statistic.df == 249
    assert statistic.t == pytest.approx(expected.statistic, rel=1e-12)
    assert statistic.p == pytest.approx(expected.pvalue, rel=1e-12)
    assert (statistic.ci_low, statistic.ci_high) == (pytest.approx(interval.low), pytest.approx(interval.high))
    difference = first - second
    assert statistic.mean_difference == pytest.approx(difference.mean())
    assert statistic.sd_difference == pytest.approx(difference.std(ddof=1))
    assert statistic.d_z == pytest.approx(difference.mean() / difference.std(ddof=1))
    assert statistic.p_adjusted == statistic.p


def test_positive_t_means_the_first_document_scored_higher():
    first, second = _scores(3, shift=0.1)
    higher = probe_statistic(first, second)
    lower = probe_statistic(second, first)
    assert higher.t > 0 and higher.d_z > 0 and higher.ci_low > 0 and higher.win_rate > 0.5
    assert lower.t == pytest.approx(-higher.t) and lower.ci_high == pytest.approx(-higher.ci_low)


def test_critical_value_is_the_authors_one_sided_band():
    statistic = probe_statistic(*_scores())
    assert statistic.critical_value == pytest.approx(1.650996, abs=1e-6)  # spec §1.5, n = 250
    assert probe_statistic(*_scores(n=10)).critical_value == pytest.approx(abs(stats.t.ppf(0.05, 9)))


# --- win rate ----------------------------------------------------------------


def test_win_rate_is_strict_and_counts_ties_against_the_first_document():
    first = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    second = np.array([0.0, 1.0, 3.0, 4.0, 5.0, 7.0, 8.0, 9.5])  # 2 wins, 3 ties, 3 losses
    statistic = probe_statistic(first, second)
    assert statistic.ties == 3
    assert statistic.win_rate == 2 / 8
    low, high = proportion_confint(2, 8, alpha=0.05, method="wilson")
    assert (statistic.win_low, statistic.win_high) == (pytest.approx(low), pytest.approx(high))
    # Swapping the documents does not hand the ties to the other side either.
    assert probe_statistic(second, first).win_rate == 3 / 8


def test_wilson_bounds_match_statsmodels_on_random_data():
    first, second = _scores(4, n=137, shift=0.02)
    statistic = probe_statistic(first, second)
    wins = int(np.sum(first > second))
    low, high = proportion_confint(wins, 137, alpha=0.05, method="wilson")
    assert statistic.win_rate == wins / 137
    assert (statistic.win_low, statistic.win_high) == (pytest.approx(low), pytest.approx(high))
    assert statistic.ties == 0


# --- degenerate cases --------------------------------------------------------


def test_identical_scores_give_no_difference():
    scores = np.linspace(0.1, 0.9, 20)
    statistic = probe_statistic(scores, scores.copy())
    # nothing to test: no p of 1 that would join the correction family
    assert all(math.isnan(v) for v in (statistic.t, statistic.p, statistic.p_adjusted, statistic.d_z))
    assert (statistic.ci_low, statistic.ci_high) == (0.0, 0.0)
    assert statistic.mean_difference == 0.0 and statistic.sd_difference == 0.0


def test_a_small_consistent_shift_at_a_dense_retrievers_scale_is_tested():
    """np.allclose called 380 and 380.002 identical (t = 0, p = 1); scipy's paired t is 61.8 on these pairs."""
    rng = np.random.default_rng(0)
    second = rng.normal(380, 5, 250)
    first = second + rng.normal(0.002, 0.0005, 250)
    statistic = probe_statistic(first, second)
    expected = stats.ttest_rel(first, second)
    assert statistic.t == pytest.approx(expected.statistic) and statistic.t > 50
    assert statistic.p == pytest.approx(expected.pvalue)
    interval = expected.confidence_interval(0.95)
    assert (statistic.ci_low, statistic.ci_high) == (pytest.approx(interval.low), pytest.approx(interval.high))


def test_position_invariant_scorer_ties_every_pair():
    # BM25 on reordered sentences: the same bag of words, the same score for both documents of every pair.
    scores = np.random.default_rng(5).uniform(5, 20, 250)
    statistic = probe_statistic(scores, scores.copy())
    assert statistic.ties == 250 and statistic.win_rate == 0.0
    low, high = proportion_confint(0, 250, alpha=0.05, method="wilson")
    assert (statistic.win_low, statistic.win_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high))
    assert statistic.win_low == pytest.approx(0.0, abs=1e-12) and statistic.win_high < 0.02
    assert math.isnan(statistic.t) and math.isnan(statistic.p)


def test_constant_non_zero_difference_takes_the_sign_test():
    second = np.linspace(0.1, 0.9, 10)
    statistic = probe_statistic(second + 0.25, second)  # scipy would say t = inf, p = 0
    # no spread: t and d_z infinite, p the exact sign test of 10 pairs one way, no t interval
    assert (statistic.t, statistic.d_z) == (math.inf, math.inf)
    assert statistic.p == statistic.p_adjusted == pytest.approx(2 * 0.5 ** 10)
    assert math.isnan(statistic.ci_low) and math.isnan(statistic.ci_high)
    # What is still defined is reported: every pair moved by the same amount, the first document always won.
    assert statistic.mean_difference == pytest.approx(0.25)
    assert statistic.sd_difference == pytest.approx(0.0, abs=1e-12)
    assert statistic.win_rate == 1.0 and statistic.ties == 0
    record = statistic.to_dict()
    assert record["t"] is None and record["d_z"] is None and record["ci_low"] is None  # inf, nan: no JSON numbers
    assert record["p"] == pytest.approx(2 * 0.5 ** 10)
    json.dumps(record, allow_nan=False)


# --- multiple-comparison correction ------------------------------------------


def test_holm_over_three_probes_equals_adjust_on_their_p():
    statistics = [probe_statistic(*_scores(seed, n=60, shift=shift))
                  for seed, shift in [(10, 0.04), (11, 0.01), (12, 0.06)]]
    corrected = correct_together(statistics, "holm")
    expected = adjust([s.p for s in statistics], "holm")
    assert [s.p_adjusted for s in corrected] == pytest.approx(expected.tolist())
    assert [s.p for s in corrected] == [s.p for s in statistics]  # raw p untouched
    assert any(s.p_adjusted > s.p for s in corrected)  # the correction did something
    assert all(s.p_adjusted == s.p for s in statistics)  # frozen originals unchanged


def test_an_undefined_test_stays_nan_and_is_left_out_of_the_family():
    defined = [probe_statistic(*_scores(seed, n=60, shift=0.03)) for seed in (20, 21)]
    second = np.linspace(0.1, 0.9, 10)
    undefined = probe_statistic(second, second.copy())  # every pair ties
    corrected = correct_together([defined[0], undefined, defined[1]], "bonferroni")
    assert math.isnan(corrected[1].p_adjusted)
    # Bonferroni over the two defined tests only: a family of three would triple p instead of doubling it.
    assert corrected[0].p_adjusted == pytest.approx(min(1.0, 2 * defined[0].p))
    assert corrected[2].p_adjusted == pytest.approx(min(1.0, 2 * defined[1].p))


def test_correction_none_keeps_p_and_unknown_method_is_refused():
    statistics = [probe_statistic(*_scores(seed, n=40)) for seed in (30, 31)]
    assert [s.p_adjusted for s in correct_together(statistics, "none")] == [s.p for s in statistics]
    assert correct_together([], "holm") == []
    with pytest.raises(ValueError, match="unknown correction"):
        correct_together(statistics, "sidak")


# --- JSON --------------------------------------------------------------------


def test_tiny_p_survives_to_dict_unrounded():
    rng = np.random.default_rng(6)
    second = rng.normal(0.5, 0.1, 250)
    first = second + rng.normal(0.5, 0.35, 250)  # a huge, consistent effect: p about 1e-57
    statistic = probe_statistic(first, second)
    assert 0 < statistic.p < 1e-40  # pandas' to_json (10 decimals) would have written 0.0
    assert statistic.p == pytest.approx(stats.ttest_rel(first, second).pvalue, rel=1e-9)
    record = json.loads(json.dumps(statistic.to_dict(), allow_nan=False))
    assert record["p"] == statistic.p and record["p_adjusted"] == statistic.p
    assert isinstance(record["n"], int) and isinstance(record["df"], int) and isinstance(record["ties"], int)
    assert set(record) == set(ProbeStatistic.__dataclass_fields__)


# --- input errors ------------------------------------------------------------


def test_unequal_lengths_are_refused():
    with pytest.raises(ValueError, match="differ in length: 3 and 2"):
        probe_statistic([0.1, 0.2, 0.3], [0.1, 0.2])


def test_fewer_than_two_pairs_are_refused():
    with pytest.raises(ValueError, match="at least 2 pairs, got 1"):
        probe_statistic([0.1], [0.2])
    with pytest.raises(ValueError, match="at least 2 pairs, got 0"):
        probe_statistic([], [])


@pytest.mark.parametrize("which", ["first", "second"])
def test_nan_scores_are_refused_naming_the_side(which):
    clean, broken = [0.1, 0.2, 0.3], [0.1, float("nan"), 0.3]
    arguments = (broken, clean) if which == "first" else (clean, broken)
    with pytest.raises(ValueError, match=f"{which} scores contain NaN .*index 1"):
        probe_statistic(*arguments)

