"""Paired comparisons of two systems over the same queries."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats


@dataclass(frozen=True)
class PairedResult:
    n_queries: int
    mean_a: float
    mean_b: float
    relative_gain: float  # (mean_a - mean_b) / mean_b
    t_statistic: float
    p_value: float


def align(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Values of two per-query series (indexed by qid) on their common queries."""
    if set(a.index) != set(b.index):
        only = sorted(set(a.index) ^ set(b.index))
        raise ValueError(f"systems are evaluated on different queries, e.g. {only[:3]}")
    common = sorted(a.index)
    return a.loc[common].to_numpy(float), b.loc[common].to_numpy(float)


def paired_t_test(a: pd.Series, b: pd.Series) -> PairedResult:
    """Two-sided paired t-test of system A against system B (per-query values by qid)."""
    x, y = align(a, b)
    if np.allclose(x, y):
        t, p = 0.0, 1.0  # identical systems: scipy would return nan
    else:
        result = stats.ttest_rel(x, y)
        t, p = float(result.statistic), float(result.pvalue)
    mean_b = float(y.mean())
    gain = (float(x.mean()) - mean_b) / mean_b if mean_b else float("nan")
    return PairedResult(len(x), float(x.mean()), mean_b, gain, t, p)
