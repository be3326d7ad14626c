"""One metric suite for every position curve: a model's metric as the relevant passage, the answer document or
the gold item moves through its input (the sweep's MRR by token offset, Lost in the Middle's accuracy by gold
index, a probe's score by insertion point, an audited model's curves).

Input: one value per (unit, position), where a unit (a query, a question, a document pair) is measured at every
position, so positions are compared pairwise on the same units. From it:

- `position_curve`: per position the mean, a seeded percentile bootstrap interval over units
  (`scipy.stats.bootstrap`), the mean relative to the reference position's, and a paired test of the position
  against the reference (`posbias.stats.paired`: t, Wilcoxon or randomisation; the exact McNemar test for values
  that are 0 or 1, such as a reader's right and wrong answers), the tests of one curve
  corrected together (`posbias.stats.corrections`: Holm by default). The reference is fixed in advance (by
  default the first position: the place a truncating model reads), never picked from the data: a curve's best
  position is best partly by chance, and testing against it would make every other one look worse.
- `curve_summary`: one row of summary numbers, each also relative to the reference position's mean:
  - `psi`: the worst-case relative drop across positions, 1 - min / max (0: flat; 1: some position scores
    nothing): the Position Sensitivity Index of Zeng et al., "Benchmarking the Myopic Trap: Positional Bias in
    Information Retrieval" (2025, arXiv 2505.13950), as they define it. On a bounded metric with a chance floor
    (MRR over k candidates, a reader's accuracy) it is capped by that floor, so PSI compares across curves of the same
    metric and candidate count only.
    It and every relative number are NaN for a curve without a true zero (`position_curve(ratio_scale=False)`:
    raw model scores) or with a negative mean.
  - `psi_above_chance`: PSI measured above the curve's chance floor c (the metric of a model whose scores say
    nothing: 0.457 for MRR over 5 candidates), (best - worst) / (best - c). It compares across candidate counts and
    metrics, where PSI does not: a model falling to chance at some position scores 1 whatever the floor, and a
    model at chance everywhere has no position sensitivity to measure (NaN), where its PSI reads 0, "unbiased";
    above 1, the worst position falls below chance (a needle ranked under documents that do not answer).
    NaN without a known floor or where the best position is not above it.
  - `worst_drop`: how far the worst position falls below the reference, (reference - min) / reference.
  - `best_worst_gap`: max - min, Lost in the Middle's robustness criterion, in the metric's own units.
  - `primacy` and `recency`: the first and the last position's mean minus the mean of the positions between
    them (positive: the ends beat the middle, the U of Lost in the Middle), absolute and relative to the
    reference. Undefined (NaN) for a curve of fewer than three positions. Where the positions stand for points
    of a continuous axis spaced unevenly (a grid's depths, denser near the ends), `coordinates` gives them, and
    the middle is the curve's mean over the interior of that axis by the trapezoid rule, so that four depths
    within 0.1 of the ends do not outweigh the one at 0.5.
  - with `coordinates`, also `mean_weighted`: the curve's mean over the whole axis (`coordinate_weights`: the
    trapezoid rule's weights, summing to one), beside `mean_unweighted`, the plain mean over positions, and the
    `middle` primacy and recency are taken against.
  - `reach`: the effective reach, the last position before the first significant drop below the reference
    (scanning positions in order from the reference; a drop is a corrected p below alpha with a lower mean),
    or the last position when none drops (`reach_censored`: the model may read further than the positions go);
    `reach_fraction` is it divided by the model's window, when given (the positions are then token offsets).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from posbias.stats.corrections import adjust
from posbias.stats.paired import exact_mcnemar, paired_p_value

COLUMNS = ("unit", "position", "value")
CURVE_COLUMNS = ["position", "n", "mean", "ci_low", "ci_high", "relative", "p", "p_adjusted", "drop"]


def checked_values(values: pd.DataFrame) -> pd.DataFrame:
    """The unit, position and value columns of `values`; refused with a `ValueError` where one is missing, a unit
    has two values at one position, or a value is NaN."""
    missing = [c for c in COLUMNS if c not in values.columns]
    if missing:
        raise ValueError(f"a position curve's values lack the columns {missing} (one value per unit and position)")
    frame = values[list(COLUMNS)].copy()
    if frame.duplicated(["unit", "position"]).any():
        unit, position = frame[frame.duplicated(["unit", "position"])].iloc[0][["unit", "position"]].tolist()
        raise ValueError(f"unit {unit!r} has two values at position {position}")
    if frame["value"].isna().any():
        raise ValueError("a position curve's values include NaN")
    return frame


def bootstrap_interval(values: np.ndarray, confidence: float, n_resamples: int, seed: int) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of `values`, reproducible by `seed`; a single value, or all
    equal, has no spread to resample, and its interval is the value itself."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2 or np.all(values == values[0]):
        return float(values.mean()), float(values.mean())
    result = stats.bootstrap((values,), np.mean, confidence_level=confidence, n_resamples=n_resamples,
                             method="percentile", random_state=np.random.default_rng(seed))
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def position_curve(values: pd.DataFrame, reference=None, test: str = "t", correction: str = "holm",
                   alpha: float = 0.05, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0,
                   n_permutations: int = 10000, ratio_scale: bool = True) -> pd.DataFrame:
    """One row per position, in position order: `n` units, `mean`, `ci_low`/`ci_high` (bootstrap, `confidence`),
    `relative` (mean / the reference's mean; NaN unless that is positive), `p` (the paired `test` against the
    reference on the units measured at both; NaN for the reference itself and where the values are identical),
    `p_adjusted` (`correction` over the curve's tests) and `drop` (significant at `alpha` and below the reference).
    `ratio_scale`: whether the values have a true zero (a rate, a reciprocal rank, an accuracy) so that ratios of
    them mean something; a raw model score has none, and every relative number of its curve is NaN.
    `reference` is a position of the curve (default: the first). `n_resamples` 0 draws no intervals (NaN): for a
    caller that wants only the tests (a bootstrap of the reach, `posbias.stats.curve_comparison`)."""
    frame = checked_values(values)
    positions = sorted(frame["position"].unique().tolist())
    reference = positions[0] if reference is None else reference
    if reference not in positions:
        raise ValueError(f"reference position {reference!r} is not a position of the curve ({positions})")
    by_position = {p: group.set_index("unit")["value"] for p, group in frame.groupby("position")}
    ref_values, ref_mean = by_position[reference], float(by_position[reference].mean())
    rows = []
    for i, position in enumerate(positions):
        series = by_position[position]
        low, high = (bootstrap_interval(series.to_numpy(), confidence, n_resamples, seed + i) if n_resamples
                     else (math.nan, math.nan))
        p = math.nan
        if position != reference and not series.reindex(ref_values.index).equals(ref_values):
            p = (exact_mcnemar(series, ref_values.reindex(series.index))[3] if test == "mcnemar"
                 else paired_p_value(test, series, ref_values, n_permutations, seed))
        mean = float(series.mean())
        rows.append({"position": position, "n": len(series), "mean": mean, "ci_low": low, "ci_high": high,
                     "relative": _ratio(mean, ref_mean) if ratio_scale else math.nan, "p": p})
    curve = pd.DataFrame(rows)
    curve["p_adjusted"] = adjust(curve["p"].to_numpy(), correction)
    curve["drop"] = (curve["p_adjusted"] < alpha) & (curve["mean"] < ref_mean)
    curve.attrs["reference"] = reference
    curve.attrs["ratio_scale"] = ratio_scale
    return curve[CURVE_COLUMNS]


def _middle(interior: pd.Series, coordinates: "pd.Series | None") -> float:
    """The mean of the interior positions: plain, or over their span of a continuous axis (trapezoid rule)."""
    if coordinates is None or len(interior) < 2:
        return float(interior.mean())
    x = np.asarray(coordinates.loc[interior.index], dtype=float)
    if np.ptp(x) == 0:
        return float(interior.mean())
    return float(np.trapezoid(interior.to_numpy(dtype=float), x) / np.ptp(x))


def coordinate_weights(coordinates) -> np.ndarray:
    """Weights summing to one for points of a continuous axis, in axis order: each point stands for half the gap to
    either neighbour (an end point for half of its one gap), the trapezoid rule's weights over the axis's span. A
    weighted mean with them is the curve's mean over the axis, so points bunched near the ends (a grid's depths
    0, 0.05, 0.1, ...) share the weight of the span they cover instead of outvoting the middle. Points all at one
    place, or a single point, weigh alike."""
    x = np.asarray(coordinates, dtype=float)
    if np.any(np.diff(x) < 0):
        raise ValueError(f"coordinates must be in axis order (non-decreasing), got {x.tolist()}")
    if len(x) < 2 or np.ptp(x) == 0:
        return np.full(len(x), 1.0 / max(len(x), 1))
    weights = np.zeros(len(x))
    weights[:-1] += np.diff(x) / 2
    weights[1:] += np.diff(x) / 2
    return weights / weights.sum()


def weighted_summary(curve: pd.DataFrame, coordinates: "pd.Series") -> dict:
    """The curve's mean over its positions plain (`mean_unweighted`) and over the axis the positions stand for
    (`mean_weighted`, `coordinate_weights`), and the middle primacy and recency are taken against (`middle`: the
    interior positions' mean over their span of the axis, trapezoid rule)."""
    means = curve.set_index("position")["mean"]
    x = coordinates.loc[means.index]
    interior = means.iloc[1:-1]
    return {"mean_unweighted": float(means.mean()),
            "mean_weighted": float(np.dot(coordinate_weights(x.to_numpy()), means.to_numpy(dtype=float))),
            "middle": _middle(interior, coordinates) if len(interior) else math.nan}


def _ratio(value: float, reference: float) -> float:
    """`value` as a share of a positive reference; NaN otherwise (a share of a negative score means nothing)."""
    return value / reference if reference > 0 else math.nan


def psi_above_chance(best: float, worst: float, chance: float | None) -> float:
    """PSI above the chance floor: the share of the best position's margin over chance that the worst loses.
    A best position within rounding of the floor leaves no margin to share (NaN)."""
    if chance is None or math.isnan(chance) or best - chance <= 1e-12 * max(1.0, abs(best)):
        return math.nan
    return (best - worst) / (best - chance)


def sensitivity(best: float, worst: float, chance: float | None, ratio_scale: bool = True) -> tuple[float, float]:
    """PSI and PSI above chance of a curve from its best and worst position means (see the module docstring): NaN
    for values without a true zero (`ratio_scale` False) and for a curve that goes negative."""
    if not ratio_scale or worst < 0:
        return math.nan, math.nan
    return (1 - worst / best if best > 0 else math.nan), psi_above_chance(best, worst, chance)


def curve_summary(curve: pd.DataFrame, window: float | None = None,
                  coordinates: "pd.Series | None" = None, chance: float | None = None) -> dict:
    """The curve's summary numbers (see the module docstring) from `position_curve`'s table; `window` is the
    model's input length in the positions' unit (tokens), for `reach_fraction`; `coordinates` (position -> its
    place on a continuous axis, such as a depth) weights the middle for primacy and recency; `chance` is the
    metric's chance floor, for `psi_above_chance`. With `coordinates` the summary also holds the curve's mean over
    positions, plain and weighted by the axis (`weighted_summary`), and the `middle` itself."""
    reference = curve.attrs.get("reference", curve["position"].iloc[0])
    means = curve.set_index("position")["mean"]
    ref, best, worst = float(means[reference]), float(means.max()), float(means.min())
    # ratios only on a scale with a true zero, and never of a curve that goes negative
    ratios = curve.attrs.get("ratio_scale", True) and worst >= 0

    def relative(value: float) -> float:
        return _ratio(value, ref) if ratios else math.nan

    psi, above_chance = sensitivity(best, worst, chance, curve.attrs.get("ratio_scale", True))
    interior = means.iloc[1:-1]
    middle = _middle(interior, coordinates) if len(interior) else math.nan
    primacy = float(means.iloc[0]) - middle if len(interior) else math.nan
    recency = float(means.iloc[-1]) - middle if len(interior) else math.nan
    after = curve[curve["position"] >= reference].reset_index(drop=True)
    dropped = after.index[after["drop"]]
    reach = (after["position"].iloc[dropped[0] - 1] if len(dropped) else after["position"].iloc[-1]).item()
    # only a curve on an axis gains the weighted means: the other callers' tables keep their columns
    weighted = weighted_summary(curve, coordinates) if coordinates is not None else {}
    return {
        "reference": reference, "reference_mean": ref, "best": best, "worst": worst,
        "psi": psi, "psi_above_chance": above_chance,
        "worst_drop": relative(ref - worst),
        "best_worst_gap": best - worst, "best_worst_gap_relative": relative(best - worst),
        "primacy": primacy, "primacy_relative": relative(primacy),
        "recency": recency, "recency_relative": relative(recency),
        "significant_drops": int(curve["drop"].sum()),
        # censored: nothing dropped, so the reach is only where the positions end
        "reach": reach, "reach_censored": not len(dropped), "reach_fraction": reach / window if window else math.nan,
        **weighted,
    }
