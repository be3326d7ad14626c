"""What a position curve could have found: the smallest drop its tests detect with a given power.

A curve compares each of its m positions with the reference over the same n units and corrects the m tests
together (Holm). "No significant drop" then means little unless it says how large a drop the units could have
shown. `minimum_detectable_drop` answers in the metric's own units: the drop at one position that the paired
test finds with probability `power` (80%), at the two-sided level alpha / m (Bonferroni, the level of Holm's first
step: Holm rejects at least what Bonferroni does, so the real power is at least this), from the noncentral t
distribution of a paired t-test (statsmodels' `TTestPower`) and the spread of the paired differences observed on
the curve: the square root of their mean variance over the tested positions, the usual plug-in of a sensitivity
analysis. Where every difference is zero (a model that ignores position) the spread of the reference position's
values stands in, times sqrt(2) (the differences of two independent draws: no credit for a correlation never
seen). The sign-flip and the exact McNemar tests are treated as the t-test they approach with more units; where
too few units let no corrected p fall below alpha (`floor_p`), no drop is detectable (NaN).

On a metric bounded by 0 and 1 (an MRR, an accuracy: `bounded`), a drop of d at a position comes from units that
succeed at the first position and fail there, which widens the paired differences' spread: by at most d(1 - d) in
variance (exactly so for right-or-wrong answers). The drop found with the given power then solves
d = k sqrt(s^2 + d(1 - d)), k the standardised detectable effect and s the spread observed, not d = k s, which
`posbias calibration` measured as optimistic: at 48 units a planted drop of 0.15 in the sweep's MRR, where k s said
0.157, was found in 56% of 200 runs, not 80%.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

POWER = 0.8


def detectable_effect_size(n_units: int, alpha: float, power: float = POWER) -> float:
    """The standardised drop (mean difference over the differences' standard deviation) a two-sided paired
    t-test at level `alpha` finds with probability `power` over `n_units` pairs; NaN under two units."""
    if n_units < 2:
        return math.nan
    from statsmodels.stats.power import TTestPower

    return float(TTestPower().solve_power(nobs=n_units, alpha=alpha, power=power, alternative="two-sided"))


def difference_spread(values: pd.DataFrame, reference) -> float:
    """The standard deviation of the paired differences (position - reference) over units, pooled over the tested
    positions as the root of their mean variance; the reference's spread times sqrt(2) when no difference varies.
    `values`: one row per (unit, position) with `value`."""
    wide = values.pivot_table(index="unit", columns="position", values="value", aggfunc="first")
    differences = wide.drop(columns=[reference]).sub(wide[reference], axis=0)
    variances = differences.var(ddof=1).dropna()
    pooled = float(np.sqrt(variances.mean())) if len(variances) else math.nan
    if pooled > _rounding(wide):
        return pooled
    spread = float(np.sqrt(2) * wide[reference].std(ddof=1))
    return spread if spread > _rounding(wide) else 0.0


def _rounding(wide: pd.DataFrame) -> float:
    """A spread below this is floating-point rounding of equal values (a deterministic model's differences), not
    a spread: 1e-12 of the values' scale."""
    return 1e-12 * max(1.0, float(np.nanmax(np.abs(wide.to_numpy(dtype=float)))))


def minimum_detectable_drop(values: pd.DataFrame, reference, alpha: float, power: float = POWER,
                            floor_p: float = 0.0, bounded: bool = False) -> float:
    """The drop below the reference, in the metric's units, that one of the curve's corrected tests finds with
    probability `power` (module docstring; `bounded`: a metric between 0 and 1, whose spread a drop widens); NaN
    where no drop can be significant (`floor_p` >= alpha: the exact tests' smallest corrected p) or the values do
    not vary at all."""
    positions = values["position"].nunique()
    n_units = int(values.groupby("position")["unit"].nunique().min())
    if positions < 2 or floor_p >= alpha:
        return math.nan
    spread = difference_spread(values, reference)
    if not spread > 0:
        return math.nan
    k = detectable_effect_size(n_units, alpha / (positions - 1), power)
    return _widened_drop(k, spread) if bounded else k * spread


def _widened_drop(k: float, spread: float) -> float:
    """The root in (0, 1) of d = k sqrt(spread^2 + d(1 - d)): the drop found with the power k stands for, on a
    bounded metric whose spread the drop widens (module docstring)."""
    a = 1 + k * k
    return (k * k + math.sqrt(k ** 4 + 4 * a * k * k * spread ** 2)) / (2 * a)


def units_for_drop(drop: float, spread: float, n_tests: int, alpha: float, power: float = POWER,
                   bounded: bool = False) -> int | None:
    """The units a curve needs for its tests to find a drop of `drop` (the metric's units) with probability `power`
    (the inverse of `minimum_detectable_drop`, at the same level alpha / `n_tests`, with the same widening of the
    spread on a `bounded` metric), given the spread of the paired differences; None when the differences have no
    spread to size by."""
    if not spread > 0 or n_tests < 1:
        return None
    from statsmodels.stats.power import TTestPower

    under_drop = math.sqrt(spread ** 2 + drop * (1 - drop)) if bounded and 0 < drop < 1 else spread
    n = TTestPower().solve_power(effect_size=drop / under_drop, alpha=alpha / n_tests, power=power,
                                 alternative="two-sided")
    return max(2, math.ceil(float(n)))
