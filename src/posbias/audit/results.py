"""A battery's result and its summary: one value per (unit, position), made into the curve and the summary by the
metric suite every position curve shares (`posbias.stats.position_curve`), a grid's curve per length, and on real
text the curve per document-length bucket (PosIR's, `by_length`); and the needle's reciprocal rank among its
distractors (ties averaged) with its chance level."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

import numpy as np

from posbias.audit.battery_declarations import DECLARATIONS

if TYPE_CHECKING:
    import pandas as pd

RATIO_SCALE = ("MRR", "accuracy", "win rate")  # metrics with a true zero: PSI and the relative numbers mean something
METRICS = {declaration.name: declaration.metric for declaration in DECLARATIONS}  # each battery's, as declared


@dataclass
class BatteryResult:
    battery: str
    metric: str
    values: pd.DataFrame  # unit, position, value (+ the battery's own columns, e.g. tokens)
    curve: pd.DataFrame = field(default=None)
    summary: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)  # battery-specific figures (the first-last probe's paired test)


def smallest_adjusted_p(test: str, n_units: int, n_tests: int, correction: str = "holm") -> float:
    """The smallest p the curve's corrected tests can reach: 2 / 2^n for the sign-flip and the exact McNemar test
    over n units (all of them one way), times the tests of a curve under Holm's or Bonferroni's correction (their
    first step); Benjamini-Hochberg's smallest adjusted p and an uncorrected one can be 2 / 2^n itself (every test
    at its floor); a t-test has no floor."""
    if test == "t":
        return 0.0
    return min(1.0, (n_tests if correction in ("holm", "bonferroni") else 1) * 2.0 ** (1 - n_units))


def summarise(result: BatteryResult, statistics: Mapping, window: int | None = None,
              test: str | None = None) -> BatteryResult:
    """The curve and its summary from the result's values; where the values carry `tokens` (a position's start in
    the model's tokens), the reach is also given in tokens (the mean start at the reach position) and as a
    fraction of the model's `window`: where the needle ends at the reach position (none when nothing dropped in
    documents shorter than the window: the reach is then only where the document ends). `underpowered`: too few
    units for any drop to reach significance; `detectable_drop`: the drop below the first position, in the
    metric's units, that the curve's tests find with 80% power (`posbias.stats.power`; NaN when underpowered)."""
    from posbias.stats.position_curve import curve_summary, position_curve
    from posbias.stats.power import minimum_detectable_drop
    stats, test = dict(statistics), test or statistics["test"]
    curve = position_curve(result.values, test=test, correction=stats["correction"], alpha=stats["alpha"],
                           confidence=stats["confidence"], n_resamples=stats["n_resamples"], seed=stats["seed"],
                           ratio_scale=result.metric in RATIO_SCALE)
    # a grid's depths are denser near the ends: its middle is weighted by the depth each stands for
    depths = result.values.groupby("position")["depth"].first() if "depth" in result.values else None
    summary = curve_summary(curve, coordinates=depths, chance=result.extra.get("chance"))
    floor = smallest_adjusted_p(test, int(curve["n"].min()), len(curve) - 1, stats["correction"])
    summary["underpowered"] = bool(floor >= stats["alpha"])
    summary["detectable_drop"] = minimum_detectable_drop(result.values, curve.attrs["reference"], stats["alpha"],
                                                         floor_p=floor, bounded=result.metric in RATIO_SCALE)
    if "tokens" in result.values:
        tokens = result.values.groupby("position")["tokens"].mean()
        curve["tokens"] = curve["position"].map(tokens)
        # the last token the model was shown to read: where the needle ends at the reach position
        summary["reach_tokens"] = float(result.values.groupby("position")["end"].mean()[summary["reach"]])
        length = result.values["length"].iloc[0] if "length" in result.values else result.extra.get("doc_tokens")
        short = summary["reach_censored"] and length and window and length < window
        summary["reach_fraction"] = summary["reach_tokens"] / window if window and not short else math.nan
    result.curve, result.summary = curve, summary
    return result


def battery_test(battery: str, statistics: Mapping) -> str:
    """The paired test of a battery's curve: a reader's right and wrong answers take the exact McNemar test, every
    other battery the configured `statistics.test`."""
    return "mcnemar" if battery.startswith("reader") else statistics["test"]


def summarise_result(result: BatteryResult, statistics: Mapping, window: int | None, test: str) -> BatteryResult:
    """The curve and summary of a battery's result: one curve, or a grid's curve per length; for a battery on real
    text (its values carry each unit's `doc_length`, its extra the length's unit), also the curve and summary per
    document-length bucket (`by_length`, under the summary's `by_length`)."""
    result = (summarise_grid if "length" in result.values else summarise)(result, statistics, window, test)
    if "doc_length" in result.values and result.extra.get("doc_length_unit"):
        result.summary["by_length"] = by_length(result, statistics, window, test)
    return result


def summarise_grid(result: BatteryResult, statistics: Mapping, window: int | None = None,
                   test: str | None = None) -> BatteryResult:
    """A grid's curve per length (the metric suite at each, `summarise`), stacked with a `length` column; the
    summary is the longest length's, with every length's under `lengths`."""
    import pandas as pd
    curves, summaries = [], {}
    for length, part in result.values.groupby("length", sort=True):
        one = summarise(BatteryResult(result.battery, result.metric, part.reset_index(drop=True),
                                      extra={"chance": result.extra.get("chance")}), statistics, window, test)
        curves.append(one.curve.assign(length=length))
        summaries[str(length)] = one.summary
    result.curve = pd.concat(curves, ignore_index=True)
    result.summary = {**summaries[str(max(result.values["length"]))], "lengths": summaries}
    return result


# Length control (PosIR, Zeng et al. 2026, arXiv 2601.08363; its analysis script ndcg_PSI_analysis.py): the queries
# grouped by the length of their relevant document in tokens, in (0, 512], (512, 1024], (1024, 1536] and above
# 1536, and positions compared within each group, so a long document's late needle is not set against a short one's
LENGTH_BOUNDS = (512, 1024, 1536)
# Fewer units than this and a bucket's numbers are shown but marked: a percentile bootstrap over so few units draws
# too narrow an interval, and a Holm-corrected sign-flip test of the sweep's 5 later positions cannot reach 0.05
# below 8 units
MIN_BUCKET_UNITS = 10
BUCKET_CURVE = ["position", "n", "mean", "ci_low", "ci_high", "p_adjusted", "drop"]  # what the JSON keeps per bucket


def length_bucket(length: float, bounds=LENGTH_BOUNDS) -> str:
    """The bucket of a document `length`: right-closed intervals between the `bounds`, open above the last."""
    for low, high in zip((0, *bounds), bounds):
        if length <= high:
            return f"({low}, {high}]"
    return f"({bounds[-1]}, ∞)"


def length_buckets(bounds=LENGTH_BOUNDS) -> list[str]:
    """Every bucket's label, shortest first."""
    return [length_bucket(high, bounds) for high in bounds] + [length_bucket(math.inf, bounds)]


def length_units(values: pd.DataFrame) -> pd.DataFrame:
    """The values with one unit per document: a grid measures each question at each of its lengths, so its unit is
    the (question, length) pair; each is measured at every position, as the metric suite pairs them."""
    if "length" not in values:
        return values
    return values.assign(unit=values["unit"].astype(str) + "@" + values["length"].astype(str))


def by_length(result: BatteryResult, statistics: Mapping, window: int | None = None, test: str | None = None,
              bounds=LENGTH_BOUNDS) -> dict:
    """The curve and summary of the units in each document-length bucket (`length_bucket` of each unit's
    `doc_length`; a unit's documents share one length), beside the pooled curve of every unit: the metric suite
    (`summarise`) on the bucket's rows, so a position effect that length alone makes (a needle late in long
    documents only) shows apart from one at every length. A bucket of fewer than `MIN_BUCKET_UNITS` units is marked
    `few_units`; an empty one, or one unit (no paired test), has no curve."""
    values = length_units(result.values)
    lengths = values.groupby("unit")["doc_length"].max()  # one length per unit: its longest document
    buckets = lengths.map(lambda n: length_bucket(n, bounds))
    # the pooled curve: a single curve's own; a grid's, its lengths pooled by unit
    pooled = (None if "length" in result.values else
              {"summary": dict(result.summary), "curve": _curve_records(result.curve)})
    rows = [_bucket_row("all", values, lengths, result, statistics, window, test, pooled)]
    for label in length_buckets(bounds):
        units = buckets.index[buckets == label]
        rows.append(_bucket_row(label, values[values["unit"].isin(units)], lengths.loc[units], result, statistics,
                                window, test, pooled=rows[0] if len(units) == len(lengths) else None))
    return {"unit": result.extra["doc_length_unit"], "bounds": list(bounds), "min_units": MIN_BUCKET_UNITS,
            "buckets": rows}


def _bucket_row(label: str, values: pd.DataFrame, lengths: pd.Series, result: BatteryResult, statistics: Mapping,
                window: int | None, test: str | None, pooled: dict | None = None) -> dict:
    row = {"bucket": label, "units": int(len(lengths)), "few_units": bool(len(lengths) < MIN_BUCKET_UNITS),
           "min_length": float(lengths.min()) if len(lengths) else math.nan,
           "max_length": float(lengths.max()) if len(lengths) else math.nan, "summary": None, "curve": None}
    if pooled is not None:  # every unit in one bucket: its curve is the pooled one, computed once
        return {**row, "summary": pooled["summary"], "curve": pooled["curve"]}
    if len(lengths) < 2:
        return row
    # the grid's lengths are pooled by unit; the reach's window check reads the longest document instead
    part = values.drop(columns=[c for c in ("length",) if c in values]).reset_index(drop=True)
    one = summarise(BatteryResult(result.battery, result.metric, part,
                                  extra={"chance": result.extra.get("chance"), "doc_tokens": float(lengths.max())}),
                    statistics, window, test)
    return {**row, "summary": one.summary, "curve": _curve_records(one.curve)}


def _curve_records(curve: pd.DataFrame) -> list[dict]:
    return curve[[c for c in BUCKET_CURVE if c in curve]].to_dict(orient="records")


def expected_reciprocal_rank(target: float, others: np.ndarray) -> float:
    """1/rank of `target` among `others`, averaged over every order of the scores tied with it."""
    higher, tied = int(np.sum(others > target)), int(np.sum(others == target))
    return float(np.mean([1.0 / (higher + j) for j in range(1, tied + 2)]))


def chance(n_distractors: int) -> float:
    """The needle's expected reciprocal rank among `n_distractors` when the scores say nothing."""
    from posbias.stats.chance import expected_random

    return expected_random({"needle": n_distractors + 1})[0]
