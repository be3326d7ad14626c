"""The position-curve metric suite on curves whose every number is known: means are exact binary fractions,
each unit's offset from its position's mean is a multiple of 1/8 that sums to zero."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from posbias.stats.position_curve import bootstrap_interval, curve_summary, position_curve

MEANS = {0: 1.0, 100: 1.0, 200: 0.25, 300: 0.75}  # flat to 100 tokens, a drop at 200, part recovery at 300
SPREAD = {0: 0.0, 100: 1.0, 200: 0.5, 300: 0.25}  # how strongly each position follows the units' offsets
OFFSETS = [0.125 * (-1) ** u * (1 + u % 3) for u in range(12)]  # sums to zero over the 12 units


def known_curve(means=MEANS, spread=SPREAD) -> pd.DataFrame:
    return pd.DataFrame([{"unit": f"q{u}", "position": p, "value": means[p] + spread[p] * offset}
                         for p in means for u, offset in enumerate(OFFSETS)])


def test_offsets_sum_to_zero():
    assert sum(OFFSETS) == 0


def test_the_curve_s_means_relative_values_and_tests_are_exact():
    values = known_curve()
    curve = position_curve(values)
    assert list(curve["position"]) == [0, 100, 200, 300] and list(curve["n"]) == [12] * 4
    assert list(curve["mean"]) == [1.0, 1.0, 0.25, 0.75]
    assert list(curve["relative"]) == [1.0, 1.0, 0.25, 0.75]
    ref = values[values.position == 0].set_index("unit")["value"]
    expected = [stats.ttest_rel(values[values.position == p].set_index("unit")["value"].loc[ref.index],
                                ref).pvalue for p in (100, 200, 300)]
    assert math.isnan(curve["p"][0])
    assert curve["p"][1:].tolist() == pytest.approx(expected, rel=1e-12)
    assert curve["p"][1] == pytest.approx(1.0)  # the same mean as the reference: no evidence of a drop
    assert curve["p_adjusted"][1:].tolist() == pytest.approx(multipletests(expected, method="holm")[1], rel=1e-12)
    assert list(curve["drop"]) == [False, False, True, True]


def test_the_summary_numbers_are_exact():
    summary = curve_summary(position_curve(known_curve()), window=400)
    assert summary["reference"] == 0 and summary["reference_mean"] == 1.0
    assert summary["psi"] == 0.75  # 1 - 0.25 / 1.0
    assert summary["worst_drop"] == 0.75
    assert summary["best_worst_gap"] == 0.75 and summary["best_worst_gap_relative"] == 0.75
    assert summary["primacy"] == 0.375  # 1.0 - mean(1.0, 0.25)
    assert summary["recency"] == 0.125  # 0.75 - mean(1.0, 0.25)
    assert summary["significant_drops"] == 2
    assert summary["reach"] == 100 and summary["reach_fraction"] == 0.25  # the last position before the drop


def test_a_grid_s_middle_is_weighted_by_the_depth_each_position_stands_for():
    """Depths 0, 0.05, 0.1, 0.5, 0.9, 0.95, 1 (denser near the ends): a dip to 0.2 at 0.5 between 0.9s. The plain
    mean of the five interior positions is 0.76 (the four near the ends outweigh the middle); over the interior
    depths by the trapezoid rule it is (0.05 * 0.9 + 2 * 0.4 * 0.55 + 0.05 * 0.9) / 0.9 = 0.53 / 0.9."""
    depths = [0.0, 0.05, 0.1, 0.5, 0.9, 0.95, 1.0]
    means = dict(enumerate([1.0, 0.9, 0.9, 0.2, 0.9, 0.9, 1.0]))
    curve = position_curve(known_curve(means, {p: 1.0 for p in means}))
    assert curve_summary(curve)["primacy"] == pytest.approx(1.0 - 0.76)
    weighted = curve_summary(curve, coordinates=pd.Series(depths, index=range(7)))
    assert weighted["primacy"] == pytest.approx(1.0 - 0.53 / 0.9)
    assert weighted["recency"] == pytest.approx(weighted["primacy"])
    even = curve_summary(curve, coordinates=pd.Series([i / 6 for i in range(7)], index=range(7)))
    interior = [0.9, 0.9, 0.2, 0.9, 0.9]  # evenly spaced: the trapezoid halves the two outer interior points
    assert even["primacy"] == pytest.approx(1.0 - (sum(interior) - (interior[0] + interior[-1]) / 2) / 4)


def test_relative_numbers_divide_by_the_reference_position():
    summary = curve_summary(position_curve(known_curve(), reference=200))
    assert summary["reference_mean"] == 0.25
    assert summary["worst_drop"] == 0.0  # nothing falls below the worst position
    assert summary["best_worst_gap_relative"] == 3.0 and summary["primacy_relative"] == 1.5
    assert summary["reach"] == 300 and summary["significant_drops"] == 0  # nothing after 200 falls below it


def test_a_flat_curve_has_no_sensitivity_and_reaches_its_end():
    flat = known_curve(means=dict.fromkeys(MEANS, 0.5))
    summary = curve_summary(position_curve(flat), window=300)
    assert summary["psi"] == 0.0 and summary["best_worst_gap"] == 0.0 and summary["worst_drop"] == 0.0
    assert summary["primacy"] == 0.0 and summary["recency"] == 0.0
    assert summary["reach"] == 300 and summary["reach_fraction"] == 1.0


def test_two_positions_have_no_middle():
    two = known_curve(means={0: 1.0, 100: 0.5}, spread={0: 0.0, 100: 1.0})
    summary = curve_summary(position_curve(two))
    assert math.isnan(summary["primacy"]) and math.isnan(summary["recency"])
    assert summary["psi"] == 0.5


def test_bootstrap_intervals_reproduce_by_seed_and_cover_the_mean():
    values = np.array(OFFSETS) + 0.5
    assert bootstrap_interval(values, 0.95, 999, seed=3) == bootstrap_interval(values, 0.95, 999, seed=3)
    assert bootstrap_interval(values, 0.95, 999, seed=3) != bootstrap_interval(values, 0.95, 999, seed=4)
    low, high = bootstrap_interval(values, 0.95, 999, seed=3)
    assert low < 0.5 < high
    assert bootstrap_interval(np.full(5, 0.25), 0.95, 999, seed=0) == (0.25, 0.25)  # nothing to resample
    first, second = position_curve(known_curve(), seed=7), position_curve(known_curve(), seed=7)
    pd.testing.assert_frame_equal(first, second)
    assert (first["ci_low"] <= first["mean"]).all() and (first["mean"] <= first["ci_high"]).all()


@pytest.mark.parametrize("test", ["t", "wilcoxon", "randomisation"])
def test_every_paired_test_finds_the_drop(test):
    curve = position_curve(known_curve(), test=test, n_permutations=2000)
    assert list(curve["drop"]) == [False, False, True, True]


def test_bad_values_are_named():
    with pytest.raises(ValueError, match=r"lack the columns \['unit'\]"):
        position_curve(pd.DataFrame({"position": [0], "value": [1.0]}))
    twice = pd.concat([known_curve(), known_curve().head(1)])
    with pytest.raises(ValueError, match="unit 'q0' has two values at position 0"):
        position_curve(twice)
    with pytest.raises(ValueError, match=r"reference position 50 is not a position of the curve"):
        position_curve(known_curve(), reference=50)


def test_binary_values_take_the_exact_mcnemar_test():
    # 8 units: right at position 0 on all, at position 1 on the first 3: 5 discordant pairs, p = 2 / 2^5
    values = pd.DataFrame([{"unit": u, "position": p, "value": float(p == 0 or u < 3)}
                           for u in range(8) for p in (0, 1)])
    curve = position_curve(values, test="mcnemar")
    assert curve["p"][1] == pytest.approx(2 / 2 ** 5) and curve["mean"].tolist() == [1.0, 0.375]
