"""Two position curves measured on the same units, compared paired, unit by unit: is model B (a new version, or a
mitigation of A) less position-sensitive than model A on the very same queries?

Input: two value tables in `posbias.stats.position_curve`'s form (one value per unit and position) with the same
(unit, position) pairs; anything else is refused, since a paired comparison of different units means nothing.

- `position_differences`: per position the mean of B - A over the units, a seeded percentile bootstrap interval of
  it, and the paired test of B against A there (the curves' own test: t, Wilcoxon, randomisation, or the exact
  McNemar test for 0/1 values), corrected across the positions together (Holm by default).
- `summary_differences`: B's PSI, PSI above chance and best-worst gap minus A's (as `curve_summary` defines them,
  from the curves' means), each with a paired bootstrap interval: the units are resampled together for both
  models, so that a unit's difficulty cancels as it does in the point estimate.
- `reach_difference`: B's reach minus A's (the last position before the first significant drop below the first,
  `curve_summary`'s), with a paired bootstrap interval: each resample of the units tests both curves again, with
  their own test and correction, so the reach moves as the drops do. Testing every position of every resample is
  the costly part: it takes `REACH_RESAMPLES` resamples and, for the randomisation test, `REACH_PERMUTATIONS`
  sign flips per test (the audit's own curves take 10,000), which a reach interval needs no finer.
- `shape_test`: whether the curves differ in shape, beyond a constant shift: the Friedman test across positions
  of the units' B - A differences (H0: the difference between the models is the same at every position;
  `scipy.stats.friedmanchisquare`, ties corrected; differences equal up to floating-point rounding are tied). A
  mitigation that lifts every position alike passes it; one that flattens a U does not.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from posbias.errors import InputError
from posbias.stats.corrections import adjust
from posbias.stats.paired import exact_mcnemar, paired_p_value, rounding_tolerance
from posbias.stats.position_curve import (bootstrap_interval, checked_values, curve_summary, position_curve,
                                          sensitivity)

REACH_RESAMPLES, REACH_PERMUTATIONS = 200, 500
DIFFERENCE_COLUMNS = ["position", "n", "mean_a", "mean_b", "difference", "ci_low", "ci_high", "p", "p_adjusted"]


def paired_matrices(a: pd.DataFrame, b: pd.DataFrame, what: tuple[str, str] = ("A", "B")
                    ) -> tuple[np.ndarray, np.ndarray, list, list]:
    """A's and B's values as [units x positions] matrices in the same unit and position order, and those orders;
    refused (`InputError`, naming `what`) unless both measured the same units at the same positions."""
    first, second = checked_values(a), checked_values(b)
    keys_a = set(map(tuple, first[["unit", "position"]].to_numpy().tolist()))
    keys_b = set(map(tuple, second[["unit", "position"]].to_numpy().tolist()))
    if keys_a != keys_b:
        only_a, only_b = sorted(keys_a - keys_b, key=str), sorted(keys_b - keys_a, key=str)
        raise InputError(f"{what[0]} and {what[1]} were not measured on the same units and positions: "
                         f"{len(only_a)} (unit, position) pairs only in {what[0]} (e.g. {only_a[:2]}), "
                         f"{len(only_b)} only in {what[1]} (e.g. {only_b[:2]})")
    wide_a = first.pivot(index="unit", columns="position", values="value").sort_index().sort_index(axis=1)
    wide_b = second.pivot(index="unit", columns="position", values="value").reindex_like(wide_a)
    if wide_a.isna().any().any():
        raise InputError(f"{what[0]} and {what[1]}: not every unit was measured at every position")
    return (wide_a.to_numpy(dtype=float), wide_b.to_numpy(dtype=float), wide_a.index.tolist(),
            wide_a.columns.tolist())


def position_differences(a: pd.DataFrame, b: pd.DataFrame, test: str = "t", correction: str = "holm",
                         confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0,
                         n_permutations: int = 10000, what: tuple[str, str] = ("A", "B")) -> pd.DataFrame:
    """One row per position: the units, A's and B's means, the mean of B - A with its bootstrap interval, and the
    paired `test` of B against A (NaN where the two are identical), `p_adjusted` over the positions. `what` names A
    and B in a refusal."""
    x, y, units, positions = paired_matrices(a, b, what)
    rows = []
    for i, position in enumerate(positions):
        first, second = pd.Series(x[:, i], index=units), pd.Series(y[:, i], index=units)
        low, high = bootstrap_interval(y[:, i] - x[:, i], confidence, n_resamples, seed + i)
        p = math.nan
        if not np.array_equal(x[:, i], y[:, i]):
            p = (exact_mcnemar(second, first)[3] if test == "mcnemar"
                 else paired_p_value(test, second, first, n_permutations, seed))
        rows.append({"position": position, "n": len(units), "mean_a": float(x[:, i].mean()),
                     "mean_b": float(y[:, i].mean()), "difference": float((y[:, i] - x[:, i]).mean()),
                     "ci_low": low, "ci_high": high, "p": p})
    table = pd.DataFrame(rows)
    table["p_adjusted"] = adjust(table["p"].to_numpy(), correction)
    return table[DIFFERENCE_COLUMNS]


def _curve_numbers(means: np.ndarray, chance: float | None, ratio_scale: bool) -> np.ndarray:
    """PSI, PSI above chance and the best-worst gap of curves given by their means ([..., positions]), as
    `posbias.stats.position_curve.curve_summary` computes them (the two ratios NaN for values without a true zero,
    `ratio_scale` False, and for a curve that goes negative)."""
    best, worst = means.max(axis=-1), means.min(axis=-1)
    psi, above = np.vectorize(lambda hi, lo: sensitivity(float(hi), float(lo), chance, ratio_scale),
                              otypes=[float, float])(best, worst)
    return np.stack([psi, above, best - worst], axis=-1)


SUMMARY_NUMBERS = ("psi", "psi_above_chance", "best_worst_gap")


def summary_differences(a: pd.DataFrame, b: pd.DataFrame, chance: float | None = None, ratio_scale: bool = True,
                        confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """One row per summary number (`SUMMARY_NUMBERS`): A's, B's, B - A, and the percentile interval of B - A over
    `n_resamples` paired bootstrap resamples of the units (NaN bounds where some resample's number is undefined).
    `chance` is the metric's chance floor (for PSI above chance); `ratio_scale` whether the values have a true zero."""
    x, y, _, _ = paired_matrices(a, b)

    def numbers(means: np.ndarray) -> np.ndarray:
        return _curve_numbers(means, chance, ratio_scale)

    point_a, point_b = numbers(x.mean(axis=0)), numbers(y.mean(axis=0))
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(x), size=(n_resamples, len(x)))  # the same units for both models
    resampled = numbers(y[rows].mean(axis=1)) - numbers(x[rows].mean(axis=1))
    tail = (1 - confidence) / 2
    records = []
    for k, name in enumerate(SUMMARY_NUMBERS):
        draws = resampled[:, k]
        defined = draws[~np.isnan(draws)]
        low, high = ((float(np.quantile(defined, tail)), float(np.quantile(defined, 1 - tail)))
                     if len(defined) == n_resamples else (math.nan, math.nan))
        records.append({"number": name, "a": float(point_a[k]), "b": float(point_b[k]),
                        "difference": float(point_b[k] - point_a[k]), "ci_low": low, "ci_high": high})
    return pd.DataFrame(records)


def _reach(matrix: np.ndarray, positions: list, test: str, correction: str, alpha: float, seed: int) -> int:
    """The reach of the curve of a [units x positions] matrix, as an index into `positions`, tested without
    intervals."""
    units = np.arange(len(matrix))
    frame = pd.DataFrame({"unit": np.repeat(units, len(positions)), "position": np.tile(positions, len(units)),
                          "value": matrix.ravel()})
    curve = position_curve(frame, test=test, correction=correction, alpha=alpha, n_resamples=0, seed=seed,
                           n_permutations=REACH_PERMUTATIONS)
    return positions.index(curve_summary(curve)["reach"])


def reach_difference(a: pd.DataFrame, b: pd.DataFrame, reach_a: int, reach_b: int, test: str = "t",
                     correction: str = "holm", alpha: float = 0.05, confidence: float = 0.95,
                     n_resamples: int = REACH_RESAMPLES, seed: int = 0) -> dict:
    """B's reach minus A's (`reach_a`, `reach_b`: the audits' own, as position indices) with the percentile
    interval of that difference over `n_resamples` paired bootstrap resamples of the units, each curve tested
    again in each; reaches are counted from 1, as the cards count them."""
    x, y, _, positions = paired_matrices(a, b)
    rng = np.random.default_rng(seed)
    draws = np.array([_reach(y[rows], positions, test, correction, alpha, seed) -
                      _reach(x[rows], positions, test, correction, alpha, seed)
                      for rows in rng.integers(0, len(x), size=(n_resamples, len(x)))], dtype=float)
    tail = (1 - confidence) / 2
    first, second = positions.index(reach_a) + 1, positions.index(reach_b) + 1
    return {"number": "reach", "a": float(first), "b": float(second), "difference": float(second - first),
            "ci_low": float(np.quantile(draws, tail)), "ci_high": float(np.quantile(draws, 1 - tail))}


def shape_test(a: pd.DataFrame, b: pd.DataFrame) -> dict:
    """The Friedman test of the units' B - A differences across positions: `statistic`, `p` (NaN where the
    differences are the same at every position for every unit, or with fewer than three positions), `positions`,
    `units`."""
    x, y, units, positions = paired_matrices(a, b)
    # differences that differ by floating-point rounding alone (0.3 - 0.2 against 0.4 - 0.3) are one value: ranked
    # apart, rounding noise would read as a change of shape
    tolerance = rounding_tolerance(x, y)
    differences = np.round((y - x) / tolerance) * tolerance if tolerance > 0 else y - x
    p, statistic = math.nan, math.nan
    if len(positions) >= 3 and not np.all(differences == differences[:, :1]):
        result = stats.friedmanchisquare(*differences.T)
        statistic, p = float(result.statistic), float(result.pvalue)
    return {"statistic": statistic, "p": p, "positions": len(positions), "units": len(units)}
