"""Paired comparisons of two systems over the same queries.

Every test here is a thin wrapper over scipy; the wrappers only fix the
degenerate cases scipy answers with nan or an error (two identical systems,
all differences zero), so that tables and the `compare` command always get a
number to print.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

TESTS = ("t", "wilcoxon", "randomisation")


def align(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Values of two per-query series (indexed by qid) on their common queries."""
    if set(a.index) != set(b.index):
        only = sorted(set(a.index) ^ set(b.index))
        raise ValueError(f"systems are evaluated on different queries, e.g. {only[:3]}")
    common = sorted(a.index)
    return a.loc[common].to_numpy(float), b.loc[common].to_numpy(float)


def json_number(value: float) -> float | None:
    """A float for a JSON document: nan and ±inf (not valid JSON) become None (null)."""
    value = float(value)
    return value if math.isfinite(value) else None


def exact_mcnemar(first: pd.Series, second: pd.Series) -> tuple[int, int, int, float]:
    """The exact McNemar test of two correct/incorrect series over the same questions (index), on the questions
    both answered: (n paired, right only in `first`, right only in `second`, two-sided p; NaN with no pair)."""
    from statsmodels.stats.contingency_tables import mcnemar

    both = first.notna() & second.notna()
    first, second = first[both].astype(bool), second[both].astype(bool)
    only_first, only_second = int((first & ~second).sum()), int((~first & second).sum())
    table = [[int((first & second).sum()), only_first], [only_second, int((~first & ~second).sum())]]
    p = float(mcnemar(table, exact=True).pvalue) if len(first) else math.nan
    return int(len(first)), only_first, only_second, p


def t_test(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Two-sided paired t-test of x against y: (t, p).

    Identical samples give (0, 1). Differences that are all the same non-zero value (two queries
    where one run ranks the answer 5th and the other 1st) have no spread to test against: scipy
    says t = inf, p = 0, which would read as overwhelming evidence; the test is undefined (nan).
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if np.allclose(x, y):
        return 0.0, 1.0  # scipy would return nan: no difference at all is no evidence of one
    diff = x - y
    if len(diff) < 2 or np.allclose(diff, diff.mean()):
        return float("nan"), float("nan")
    result = stats.ttest_rel(x, y)
    return float(result.statistic), float(result.pvalue)


def wilcoxon_signed_rank(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided p of the Wilcoxon signed-rank test of x against y.

    Zero differences are dropped (scipy's default, Wilcoxon's own treatment);
    when none is left there is nothing to rank and the p-value is 1.
    """
    diff = np.asarray(x, float) - np.asarray(y, float)
    if not np.any(diff != 0):
        return 1.0  # scipy warns and may return nan here
    return float(stats.wilcoxon(diff).pvalue)


def _abs_mean(diff: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.abs(np.mean(diff, axis=axis))


def randomisation_test(x: np.ndarray, y: np.ndarray, n_permutations: int = 10000, seed: int = 0) -> float:
    """Two-sided paired randomisation (sign-flip) test of the mean difference of x and y.

    Under the null hypothesis the two systems are exchangeable on each query,
    so each difference keeps its size and is equally likely either sign.
    The statistic is |mean(x - y)|, tested one-sided ("greater"), which makes
    the test two-sided in the mean difference. With N random sign flips scipy
    counts the observed assignment among them: p = (b + 1) / (N + 1), never 0.
    When 2**n <= N it enumerates all 2**n assignments instead (exact p).
    """
    diff = np.asarray(x, float) - np.asarray(y, float)
    if not np.any(diff != 0):
        return 1.0  # every sign flip gives the observed statistic
    # One sample with permutation_type="samples" means: flip the sign of each observation.
    result = stats.permutation_test((diff,), _abs_mean, permutation_type="samples", vectorized=True,
                                    n_resamples=n_permutations, alternative="greater",
                                    rng=np.random.default_rng(seed),
                                    batch=1000)  # bounds memory (batch x n_queries) on large query sets
    return float(result.pvalue)


@dataclass(frozen=True)
class PairedComparison:
    """System A against system B on the same queries: means, 95% CI, three tests, effect size."""

    n_queries: int
    mean_a: float
    mean_b: float
    mean_difference: float  # mean_a - mean_b
    ci_low: float
    ci_high: float
    t_statistic: float
    t_p: float
    wilcoxon_p: float
    randomisation_p: float
    n_permutations: int
    seed: int
    effect_size: float  # mean difference / sd of the differences (ddof=1)

    def to_dict(self) -> dict:
        """Nested JSON-ready dict; nan (and inf) become None."""
        return {
            "n_queries": self.n_queries,
            "mean_a": json_number(self.mean_a),
            "mean_b": json_number(self.mean_b),
            "mean_difference": json_number(self.mean_difference),
            "ci95": [json_number(self.ci_low), json_number(self.ci_high)],
            "t_test": {"t": json_number(self.t_statistic), "p": json_number(self.t_p)},
            "wilcoxon_signed_rank": {"p": json_number(self.wilcoxon_p)},
            "randomisation": {"p": json_number(self.randomisation_p), "permutations": self.n_permutations,
                              "seed": self.seed},
            "effect_size": json_number(self.effect_size),
        }


def _effect_size(diff: np.ndarray) -> float:
    """Mean difference in units of the differences' standard deviation (paired Cohen's d)."""
    mean = float(diff.mean())
    sd = float(diff.std(ddof=1)) if len(diff) > 1 else float("nan")
    if sd == 0:
        return 0.0 if mean == 0 else float("nan")  # no spread: no difference is 0, any other is unbounded
    return mean / sd


def compare_paired(a: pd.Series, b: pd.Series, n_permutations: int = 10000, seed: int = 0) -> PairedComparison:
    """Compare system A with system B on per-query values (series indexed by qid)."""
    x, y = align(a, b)
    if len(x) == 0:
        raise ValueError("no queries to compare")
    diff = x - y
    t, t_p = t_test(x, y)
    if np.allclose(x, y):
        ci_low, ci_high = 0.0, 0.0  # consistent with t = 0, p = 1
    else:
        ci = stats.ttest_rel(x, y).confidence_interval(0.95)
        ci_low, ci_high = float(ci.low), float(ci.high)
    return PairedComparison(
        n_queries=len(x), mean_a=float(x.mean()), mean_b=float(y.mean()), mean_difference=float(diff.mean()),
        ci_low=ci_low, ci_high=ci_high, t_statistic=t, t_p=t_p, wilcoxon_p=wilcoxon_signed_rank(x, y),
        randomisation_p=randomisation_test(x, y, n_permutations, seed), n_permutations=n_permutations, seed=seed,
        effect_size=_effect_size(diff))


def paired_p_value(test: str, a: pd.Series, b: pd.Series, n_permutations: int = 10000, seed: int = 0) -> float:
    """Two-sided p of one paired test (one of TESTS) of system A against B, series indexed by qid."""
    if test not in TESTS:
        raise ValueError(f"unknown paired test {test!r}; choose one of {', '.join(TESTS)}")
    x, y = align(a, b)
    if test == "t":
        return t_test(x, y)[1]
    if test == "wilcoxon":
        return wilcoxon_signed_rank(x, y)
    return randomisation_test(x, y, n_permutations, seed)
