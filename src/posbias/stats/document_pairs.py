"""Paired statistics of one probe for one scorer (spec: shared/specs/probes.md §1.5, §6.1 items 1-2).

A probe scores the same queries against two versions of a document, D1 and D2. The study reports only the
paired t statistic and its p from `scipy.stats.ttest_rel`, with error bars that are in fact a constant one-sided
critical value. We keep t and p (p as an unrounded float: the authors' JSON rounding turned small p into 0) and
add what the size and direction of the effect need: the t-based 95% CI of the mean difference, the paired effect
size d_z, and the win rate (how often the first document scores higher) with a Wilson 95% interval.

Sign convention: differences are first − second, so a positive t means the first document scored higher.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Sequence

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from posbias.stats.corrections import adjust
from posbias.stats.paired import json_number, t_test

CONFIDENCE = 0.95
# The study's error bars: |t.ppf(0.05, n - 1)|, a one-sided critical value, not an interval of anything.
CRITICAL_VALUE_ALPHA = 0.05

_INTEGER_FIELDS = ("n", "df", "ties")


@dataclass(frozen=True)
class ProbeStatistic:
    """Paired comparison of M(Q, first) with M(Q, second) over n pairs; positive t = the first document scored higher.

    `ci_low`/`ci_high` bound the mean difference (not t); `win_rate` counts ties against the first document, as the
    study does; `critical_value` is the authors' band, to be drawn only as "one-sided α = 0.05 critical value".
    """

    n: int
    t: float
    p: float  # two-sided
    df: int  # n - 1
    mean_difference: float  # mean(first - second)
    sd_difference: float  # ddof=1
    ci_low: float
    ci_high: float
    d_z: float  # t / sqrt(n) = mean_difference / sd_difference
    win_rate: float  # share of pairs with first > second (strictly)
    win_low: float
    win_high: float
    ties: int  # pairs with first == second exactly
    critical_value: float
    p_adjusted: float  # p corrected over a family of probes (see `correct_together`); p until then

    def to_dict(self) -> dict:
        """Flat JSON-ready dict keyed by field name; NaN and ±inf become None, p stays a full-precision float."""
        return {name: (value if name in _INTEGER_FIELDS else json_number(value))
                for name, value in asdict(self).items()}


def _scores(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name} scores must be one-dimensional, got shape {array.shape}")
    missing = np.flatnonzero(np.isnan(array))
    if missing.size:
        raise ValueError(f"{name} scores contain NaN ({missing.size} of {array.size}, first at index {missing[0]})")
    return array


def probe_statistic(first: Sequence[float] | np.ndarray, second: Sequence[float] | np.ndarray) -> ProbeStatistic:
    """Paired statistics of aligned scores M(Q, D1) (`first`) and M(Q, D2) (`second`) over the same pairs.

    Positive t (and mean difference, d_z) = the first document scored higher. The degenerate cases follow
    `posbias.stats.paired.t_test`: identical scores (exact equality, not `np.allclose`: at a dense retriever's scale of
    ~380 a consistent +0.002 shift is a real difference) give no test (t, p and d_z NaN) and CI [0, 0]; differences
    that are all the same non-zero value have no spread: t and d_z are +-inf by the shift's sign (None in `to_dict`),
    p is the exact sign test's (2 * 0.5**n) and the CI, which would need a spread, is NaN.
    """
    first, second = _scores(first, "first"), _scores(second, "second")
    if first.size != second.size:
        raise ValueError(f"first and second scores differ in length: {first.size} and {second.size} pairs")
    n = int(first.size)
    if n < 2:
        raise ValueError(f"a paired test needs at least 2 pairs, got {n}")

    difference = first - second
    t, p = t_test(first, second)
    if np.array_equal(first, second):  # every pair ties exactly: nothing to test (t, p NaN), no difference
        ci_low = ci_high = 0.0
    elif not math.isfinite(t):  # no spread: no t interval
        ci_low = ci_high = math.nan
    else:
        interval = stats.ttest_rel(first, second).confidence_interval(CONFIDENCE)
        ci_low, ci_high = float(interval.low), float(interval.high)

    wins = int(np.count_nonzero(first > second))
    win_low, win_high = proportion_confint(wins, n, alpha=1 - CONFIDENCE, method="wilson")
    return ProbeStatistic(
        n=n, t=t, p=p, df=n - 1, mean_difference=float(difference.mean()),
        sd_difference=float(difference.std(ddof=1)), ci_low=ci_low, ci_high=ci_high,
        d_z=t / math.sqrt(n),  # carries t's NaN or inf in the degenerate cases
        win_rate=wins / n, win_low=float(win_low), win_high=float(win_high),
        ties=int(np.count_nonzero(first == second)),
        critical_value=abs(float(stats.t.ppf(CRITICAL_VALUE_ALPHA, n - 1))), p_adjusted=p)


def correct_together(statistics: Sequence[ProbeStatistic], method: str) -> list[ProbeStatistic]:
    """The statistics with `p_adjusted` corrected over all of them as one family (one table), in the input order.

    `method` is one of `posbias.stats.corrections.METHODS`. A NaN p (an undefined test) stays NaN and is not
    counted in the family, so it does not make the other tests stricter.
    """
    adjusted = adjust([statistic.p for statistic in statistics], method)
    return [replace(statistic, p_adjusted=float(value)) for statistic, value in zip(statistics, adjusted)]

