"""Paired comparisons of two systems over the same queries.

Every test here is a thin wrapper over scipy; the wrappers only settle the
degenerate cases scipy answers with a warning, an error or a spurious number.
A comparison whose pairs all tie (every difference exactly zero) has nothing
to test: its p is NaN, which the tables print as "no test" and the
multiple-comparison corrections leave out of the family (`corrections.adjust`).
"Tie" means exact equality, never `np.allclose`: at a dense retriever's score
scale (~380) allclose's relative tolerance (1e-5, so ~0.004) would call a
consistent +0.002 shift no difference at all. A constant non-zero shift (every
difference the same, e.g. a deterministic model always 0.1 lower) is no tie:
the t-test, which has no spread to scale it by, falls back to the exact sign
test there (`t_test`).

Correct/incorrect outcomes are compared with the exact McNemar test when the
pairs are independent (`exact_mcnemar`), and with a sign-flip test over
clusters when several pairs share a cluster (`clustered_mcnemar`: chunks of one
document judged for one query, verdicts on one question).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

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
    both answered: (n paired, right only in `first`, right only in `second`, two-sided p). The p is NaN with no
    pair or no discordant pair: every pair ties, so there is nothing to test (statsmodels would say 1)."""
    from statsmodels.stats.contingency_tables import mcnemar

    both = first.notna() & second.notna()
    first, second = first[both].astype(bool), second[both].astype(bool)
    only_first, only_second = int((first & ~second).sum()), int((~first & second).sum())
    table = [[int((first & second).sum()), only_first], [only_second, int((~first & ~second).sum())]]
    p = float(mcnemar(table, exact=True).pvalue) if only_first + only_second else math.nan
    return int(len(first)), only_first, only_second, p


ROUNDING_ULPS = 64  # differences varying by less than this many units in the last place of the data: rounding


def rounding_tolerance(x: np.ndarray, y: np.ndarray) -> float:
    """How far apart differences of x and y may lie by floating-point rounding alone.

    The bound is a few dozen units in the last place of the largest |value| (about 4e-15 at scores of
    order 1, 4e-12 at 380), not a relative tolerance on the values as `np.allclose` has: it absorbs
    the noise of floating-point arithmetic (0.3 - 0.1 against 0.4 - 0.2), never a real shift.
    """
    scale = max(float(np.max(np.abs(x))), float(np.max(np.abs(y))))
    return ROUNDING_ULPS * float(np.spacing(scale))


def t_test(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Two-sided paired t-test of x against y: (t, p).

    Differences without spread (all equal up to floating-point rounding, `rounding_tolerance`) leave the t-test
    no standard error; scipy then says t = inf (or a huge t from rounding noise) and p = 0. Two cases:

    - every difference is zero (up to rounding): every pair ties, nothing to test: (nan, nan);
    - a constant non-zero shift (a deterministic model always 0.1 lower): t = +inf or -inf by the
      shift's sign, and p from the exact two-sided sign test (`scipy.stats.binomtest` of the positive
      differences among the n non-zero ones: 2 * 0.5**n, at most 1). The t-test's own limit as the
      spread goes to 0 is p -> 0, which overstates; n pairs all one way is the evidence the data hold.

    Fewer than two pairs give (nan, nan): one difference has no spread to tell a shift from noise.
    A real shift at any scale, however small its spread, takes the t-test.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    diff = x - y
    if len(diff) < 2:
        return float("nan"), float("nan")
    rounding = rounding_tolerance(x, y)
    if float(np.ptp(diff)) > rounding:
        result = stats.ttest_rel(x, y)
        return float(result.statistic), float(result.pvalue)
    if float(np.max(np.abs(diff))) <= rounding:
        return float("nan"), float("nan")  # every pair ties
    # The shift exceeds the spread, so every difference is non-zero and of the shift's sign.
    nonzero = diff[diff != 0]
    p = stats.binomtest(int(np.count_nonzero(nonzero > 0)), len(nonzero)).pvalue
    return math.copysign(math.inf, float(diff.mean())), float(p)


def wilcoxon_signed_rank(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided p of the Wilcoxon signed-rank test of x against y.

    Zero differences (exactly zero) are dropped (scipy's default, Wilcoxon's own treatment);
    when none is left every pair ties, there is nothing to rank and the p-value is NaN.
    """
    diff = np.asarray(x, float) - np.asarray(y, float)
    if not np.any(diff != 0):
        return float("nan")  # every pair ties: no test (scipy warns and may return nan or 1 here)
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
    With every difference exactly zero (all pairs tie) there is no test: NaN; one non-zero difference alone: p = 1.
    """
    diff = np.asarray(x, float) - np.asarray(y, float)
    if not np.any(diff != 0):
        return float("nan")  # every sign flip gives the observed statistic: nothing to test
    if len(diff) == 1:
        return 1.0  # both signs of one difference give the same |mean| (scipy refuses one observation)
    # One sample with permutation_type="samples" means: flip the sign of each observation.
    result = stats.permutation_test((diff,), _abs_mean, permutation_type="samples", vectorized=True,
                                    n_resamples=n_permutations, alternative="greater",
                                    rng=np.random.default_rng(seed),
                                    batch=1000)  # bounds memory (batch x n_queries) on large query sets
    return float(result.pvalue)


def clustered_mcnemar(first: pd.Series, second: pd.Series, clusters: pd.Series | Sequence,
                      n_permutations: int = 10000, seed: int = 0) -> tuple[int, int, int, float, int]:
    """McNemar's question (do the discordant pairs lean one way?) for pairs that share clusters: two correct/
    incorrect series over the same items (index), `clusters` each item's cluster (a series on the same index, or a
    sequence in the items' order). On the items both answered: (n paired, right only in `first`, right only in
    `second`, two-sided p, clusters).

    Items of one cluster (the chunks of one document judged for one query, the verdicts on one question) are not
    independent, so the exact McNemar test, which counts every discordant pair as independent evidence, gives p-values
    too small. Here each cluster k contributes its net discordance d_k = (right only in `first`) - (right only in
    `second`). Under the null the two conditions are exchangeable within each pair, so every d_k is symmetric about
    0, and clusters are independent: the p is the two-sided sign-flip test of the d_k (`randomisation_test`), exact
    when 2**(clusters with d_k != 0) <= `n_permutations`, else a seeded Monte Carlo estimate. With one item per cluster
    it is the sign-flip test of the discordant counts: the exact McNemar (two-sided binomial) p where enumerated,
    a Monte Carlo estimate of it otherwise (never below 1 / (`n_permutations` + 1)). The p is NaN with no discordant
    pair, as `exact_mcnemar`'s.
    """
    if not isinstance(clusters, pd.Series):
        if len(clusters) != len(first):
            raise ValueError(f"{len(clusters)} cluster keys for {len(first)} items")
        clusters = pd.Series(list(clusters), index=first.index, dtype=object)
    both = first.notna() & second.notna()
    first, second = first[both].astype(bool), second[both].astype(bool)
    only_first, only_second = first & ~second, ~first & second
    net = (only_first.astype(int) - only_second.astype(int)).groupby(clusters[both], sort=False).sum()
    # A cluster with d_k = 0 is the same under every sign flip: leaving it out changes no p, and keeps more exact.
    discordant = net[net != 0].to_numpy(float)
    p = randomisation_test(discordant, np.zeros_like(discordant), n_permutations, seed) if len(discordant) else math.nan
    return int(len(first)), int(only_first.sum()), int(only_second.sum()), p, int(len(net))


@dataclass(frozen=True)
class PairedComparison:
    """System A against system B on the same queries: means, 95% CI, three tests, effect size.

    A p of NaN (None in `to_dict`) means no test: every pair tied. A constant non-zero shift has an infinite t
    (None in `to_dict`) and the sign test's p (`t_test`).
    """

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
    if not np.any(diff != 0):
        ci_low, ci_high = 0.0, 0.0  # every pair ties: the difference is exactly 0 (scipy would say nan)
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
