"""The minimum detectable drop (`posbias.stats.power`): the noncentral t's answer, checked by simulating the
curve's own tests with the drop planted."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from posbias.stats.power import detectable_effect_size, difference_spread, minimum_detectable_drop


def curve_values(n_units: int, drops: dict[int, float], sd: float, rng) -> pd.DataFrame:
    """Units with their own level; each position the reference's value minus its drop plus noise of `sd`."""
    level = rng.normal(0.6, 0.2, n_units)
    rows = [{"unit": u, "position": 0, "value": level[u]} for u in range(n_units)]
    rows += [{"unit": u, "position": p, "value": level[u] - drop + rng.normal(0, sd)}
             for p, drop in drops.items() for u in range(n_units)]
    return pd.DataFrame(rows)


def test_the_effect_size_is_the_noncentral_t_s():
    """At the returned d the power of the two-sided paired t-test, from the noncentral t, is 80%."""
    for n, alpha in ((10, 0.05), (30, 0.0125), (200, 0.05 / 9)):
        d = detectable_effect_size(n, alpha)
        critical = stats.t.ppf(1 - alpha / 2, n - 1)
        power = stats.nct.sf(critical, n - 1, d * math.sqrt(n)) + stats.nct.cdf(-critical, n - 1, d * math.sqrt(n))
        assert power == pytest.approx(0.8, abs=1e-6)
    assert detectable_effect_size(30, 0.05) < detectable_effect_size(10, 0.05)  # more units, smaller drops
    assert math.isnan(detectable_effect_size(1, 0.05))


def test_a_drop_of_that_size_is_found_80_percent_of_the_time_by_the_curve_s_own_tests():
    """Four positions, 24 units, Holm at 0.05: plant the detectable drop at one position (measured on a curve
    without it) and count how often Holm over the curve's four t-tests finds it, over 2,000 simulated curves. The
    bound is Bonferroni's, so the rate is at least 80% (minus simulation error) and close to it."""
    from posbias.stats.corrections import adjust  # statsmodels' Holm, without its full garbage collection per call

    rng = np.random.default_rng(0)
    sd, n = 0.15, 24
    assert difference_spread(curve_values(4000, {1: 0, 2: 0, 3: 0, 4: 0}, sd, rng), 0) == pytest.approx(sd, rel=0.02)
    drop = detectable_effect_size(n, 0.05 / 4) * sd
    # what one 24-unit curve reports: the same, up to its estimate of the spread
    assert minimum_detectable_drop(curve_values(n, {1: 0, 2: 0, 3: 0, 4: 0}, sd, rng), 0, 0.05) == pytest.approx(
        drop, rel=0.3)
    differences = rng.normal(0, sd, (2000, 4, n))  # 2,000 curves' paired differences at their four positions
    differences[:, 1] -= drop
    p = stats.ttest_1samp(differences, 0.0, axis=2).pvalue
    # Holm per curve: sorted p against alpha / 4, / 3, / 2, / 1, rejecting up to the first that fails
    ordered = np.sort(p, axis=1)
    passes = np.cumprod(ordered <= 0.05 / np.arange(4, 0, -1), axis=1).astype(bool)
    threshold = np.where(passes.any(axis=1), np.max(np.where(passes, ordered, -1.0), axis=1), -1.0)
    found = float(np.mean(p[:, 1] <= threshold))
    assert (p[:50, 1] <= threshold[:50]).tolist() == [bool(adjust(row, "holm")[1] <= 0.05) for row in p[:50]]
    assert 0.78 <= found <= 0.86


def test_no_drop_is_detectable_where_no_p_can_fall_below_alpha_or_nothing_varies():
    rng = np.random.default_rng(1)
    values = curve_values(5, {1: 0.1, 2: 0.2}, 0.1, rng)
    assert minimum_detectable_drop(values, 0, alpha=0.05) > 0
    assert math.isnan(minimum_detectable_drop(values, 0, alpha=0.05, floor_p=2 * 2.0 ** (1 - 5)))
    flat = pd.DataFrame({"unit": [0, 1, 0, 1], "position": [0, 0, 1, 1], "value": [0.5] * 4})
    assert math.isnan(minimum_detectable_drop(flat, 0, alpha=0.05))
    # a deterministic curve (every unit alike: 1, 1/2, 1/3) has differences equal up to rounding: no spread
    same = pd.DataFrame({"unit": [u for u in range(12) for _ in range(3)], "position": [0, 1, 2] * 12,
                         "value": [1.0, 1 / 2, 1 / 3] * 12})
    assert difference_spread(same, 0) == 0.0 and math.isnan(minimum_detectable_drop(same, 0, alpha=0.05))


def test_a_model_that_ignores_position_is_judged_by_its_reference_s_spread():
    """Every difference zero: the reference's spread times sqrt(2) stands in, not a spread of 0 (a drop of 0)."""
    values = pd.DataFrame({"unit": [0, 1, 2] * 2, "position": [0] * 3 + [1] * 3, "value": [0.2, 0.5, 0.8] * 2})
    assert difference_spread(values, 0) == pytest.approx(math.sqrt(2) * 0.3)


def test_units_for_drop_inverts_the_minimum_detectable_drop():
    from posbias.stats.power import detectable_effect_size, units_for_drop

    n = units_for_drop(0.15, 0.4, 4, 0.05)
    assert detectable_effect_size(n, 0.05 / 4) * 0.4 <= 0.15 < detectable_effect_size(n - 1, 0.05 / 4) * 0.4
    assert units_for_drop(0.15, 0.0, 4, 0.05) is None


def test_on_a_bounded_metric_the_detectable_drop_counts_the_spread_the_drop_adds():
    from posbias.stats.power import detectable_effect_size, units_for_drop

    rng = np.random.default_rng(3)
    values = curve_values(30, {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0}, 0.2, rng)
    plain = minimum_detectable_drop(values, 0, alpha=0.05)
    widened = minimum_detectable_drop(values, 0, alpha=0.05, bounded=True)
    k, s = detectable_effect_size(30, 0.05 / 4), difference_spread(values, 0)
    assert widened > plain and widened == pytest.approx(k * math.sqrt(s ** 2 + widened * (1 - widened)))
    # right-or-wrong answers: 60 pairs, 10% discordant each way under no effect (variance 0.2); a drop of d moves
    # d more units from right to wrong, and the differences' variance becomes 0.2 + d - d^2 exactly
    n = units_for_drop(0.15, math.sqrt(0.2), 4, 0.05, bounded=True)
    assert detectable_effect_size(n, 0.05 / 4) * math.sqrt(0.2 + 0.15 * 0.85) <= 0.15
    assert n > units_for_drop(0.15, math.sqrt(0.2), 4, 0.05)
