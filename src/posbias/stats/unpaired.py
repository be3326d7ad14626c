"""Unpaired comparisons of two groups of queries (different queries on each side) and intervals of a mean, through
scipy."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def welch_t_test(x, y) -> tuple[float, float]:
    """Two-sided Welch t-test (unequal variances) of group x against group y: (t, p).

    Fewer than two values on a side leave nothing to estimate a variance from: (nan, nan). Two groups without
    any spread are equal (0, 1) or undefined (nan, nan), where scipy would divide by zero."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 2 or len(y) < 2:
        return math.nan, math.nan
    if np.ptp(x) == 0 and np.ptp(y) == 0:
        return (0.0, 1.0) if x[0] == y[0] else (math.nan, math.nan)
    result = stats.ttest_ind(x, y, equal_var=False)
    return float(result.statistic), float(result.pvalue)


def mean_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean of `values` and its t-interval over them: (mean, low, high); nan bounds with fewer than two values,
    the mean itself when they do not vary."""
    values = np.asarray(values, float)
    if len(values) == 0:
        return math.nan, math.nan, math.nan
    mean = float(values.mean())
    if len(values) < 2:
        return mean, math.nan, math.nan
    sem = float(stats.sem(values))
    if sem == 0:
        return mean, mean, mean
    low, high = stats.t.interval(confidence, len(values) - 1, loc=mean, scale=sem)
    return mean, float(low), float(high)
