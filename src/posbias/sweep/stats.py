"""The sweep's statistics and the position breakdown's, one section each.

The sweep's curves: per model and position, MRR and the mean rank of the relevant document over the base
queries, with 95% t-intervals, and a paired test of each position against the first (the same base queries at
both). Per-query values are averaged over seeds first (`posbias.evaluation.seeds`); the rank of a run is 1/RR,
exact because RR has no cut-off and the variant is always a candidate. Each model's tests form one family for the
multiple-comparison correction, in the sweep table as in the sensitivity table (`sweep_sensitivity`), so a
position is a significant drop in both or in neither; a position whose queries all tie with the first has no test
(p NaN) and is left out of it.

Effectiveness by answer position: a query set's metric per system and position bin, each later bin tested
against the first with Welch's t-test (different queries in each bin, so unpaired). Per-query values are the
seed-averaged ones the tables read; positions come from a `qid<TAB>start` file, true (the generator's) or
estimated (first relevant passages of a real collection). All tests of the table form one family for the
multiple-comparison correction."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import pandas as pd

from posbias.errors import InputError
from posbias.evaluation.seeds import average_over_seeds
from posbias.stats.corrections import adjust
from posbias.stats.paired import paired_p_value
from posbias.stats.position_curve import curve_summary, position_curve
from posbias.stats.unpaired import mean_interval, welch_t_test

RANK = "rank"  # the derived per-query metric: 1/RR


# --- sweep curves ----------------------------------------------------------------------------------------------


def with_ranks(per_seed: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The per-seed rows of `metric` (RR) and, for each, a `rank` row (1/RR), both averaged over seeds."""
    rows = per_seed[per_seed["metric"] == metric]
    if rows.empty:
        raise InputError(f"no per-query values of {metric} in the sweep's evaluations")
    if (rows["value"] <= 0).any():
        bad = rows[rows["value"] <= 0].iloc[0]
        raise InputError(f"{bad['system']} seed {bad['seed']}: query {bad['qid']} has {metric} 0; the sweep's "
                         f"variant must be among every run's candidates (was the candidate list cut?)")
    ranks = rows.assign(metric=RANK, value=1.0 / rows["value"])
    return average_over_seeds(pd.concat([rows, ranks], ignore_index=True))


def sweep_curves(averaged: pd.DataFrame, positions: pd.DataFrame, models: Mapping[str, str], metric: str,
                 statistics: Mapping, alpha: float) -> pd.DataFrame:
    """One record per (model, position). `averaged` holds seed-averaged `metric` and `rank` rows; `positions`
    the sweep's positions file (qid, start, position, base); `models` maps the models shown to their labels;
    `statistics` is the config section (test, correction, permutations, seed)."""
    placed = positions.set_index("qid")
    records = []
    for model, label in models.items():
        rows = averaged[averaged["system"] == model]
        if rows.empty:
            raise InputError(f"no sweep evaluations of model {model!r}")
        missing = sorted(set(placed.index) - set(rows["qid"]))
        if missing:
            raise InputError(f"model {model!r}: no sweep values for {len(missing)} queries, e.g. {missing[:3]}")
        wide = rows.pivot(index="qid", columns="metric", values="value").join(placed, how="inner")
        first = wide[wide["position"] == 0].set_index("base")
        for position, group in wide.groupby("position", sort=True):
            at = group.set_index("base")
            mrr, mrr_low, mrr_high = mean_interval(at[metric])
            rank, rank_low, rank_high = mean_interval(at[RANK])
            p = math.nan if position == 0 else paired_p_value(
                statistics["test"], at[metric], first[metric], statistics["permutations"], statistics["seed"])
            records.append({
                "model": model, "label": label, "position": int(position), "n_queries": len(at),
                "mean_start": float(at["start"].mean()), "min_start": int(at["start"].min()),
                "max_start": int(at["start"].max()), "mrr": mrr, "mrr_ci_low": mrr_low, "mrr_ci_high": mrr_high,
                "mean_rank": rank, "rank_ci_low": rank_low, "rank_ci_high": rank_high,
                "mrr_difference": mrr - float(first[metric].mean()), "p": p})
    table = pd.DataFrame.from_records(records)
    # one family per model's curve, as sweep_sensitivity's position_curve corrects it
    table["p_adjusted"] = table.groupby("model", sort=False)["p"].transform(
        lambda p: pd.Series(adjust(p.to_numpy(), statistics["correction"]), index=p.index))
    table["alpha"] = alpha
    table["significant"] = table["p_adjusted"] < alpha  # nan (the first position, untestable) is never below
    return table


def sweep_sensitivity(averaged: pd.DataFrame, positions: pd.DataFrame, models: Mapping[str, str], metric: str,
                      statistics: Mapping, alpha: float) -> pd.DataFrame:
    """One record per model: the position-curve metric suite (`posbias.stats.position_curve`) of its `metric`
    by position, the base queries paired across positions, the first position the reference; `reach_start` is
    the mean start token of the position the effective reach ends at. Each model's tests form their own family."""
    placed = positions.set_index("qid")
    starts = placed.groupby("position")["start"].mean()
    records = []
    for model, label in models.items():
        rows = averaged[(averaged["system"] == model) & (averaged["metric"] == metric)]
        values = rows.set_index("qid")[["value"]].join(placed, how="inner")
        curve = position_curve(values.rename(columns={"base": "unit"}), reference=0, test=statistics["test"],
                               correction=statistics["correction"], alpha=alpha, seed=statistics["seed"],
                               n_permutations=statistics["permutations"])
        summary = curve_summary(curve)
        records.append({"model": model, "label": label, **summary, "reach_start": float(starts[summary["reach"]]),
                        "n_queries": int(curve["n"].min()), "n_positions": len(curve), "alpha": alpha})
    return pd.DataFrame.from_records(records)


# --- position breakdown ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bin:
    low: int
    high: int | None  # None: open-ended

    def holds(self, start: int) -> bool:
        return start >= self.low and (self.high is None or start < self.high)

    @property
    def label(self) -> str:
        return f"[{self.low}, {self.high})" if self.high is not None else f"≥ {self.low}"


def bins_from_edges(edges: Sequence[int]) -> list[Bin]:
    """[0, e1), [e1, e2), ..., >= ek from the inner edges e1 < ... < ek (all > 0)."""
    edges = [int(e) for e in edges]
    if not edges or edges[0] <= 0 or any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"bin edges must be positive and increasing, got {edges}")
    bounds = [0, *edges]
    return [Bin(low, high) for low, high in zip(bounds, [*edges, None])]


def bin_of(start: int, bins: Sequence[Bin]) -> int:
    return next(i for i, b in enumerate(bins) if b.holds(start))


def position_breakdown(averaged: pd.DataFrame, positions: Mapping[str, int], systems: Mapping[str, str],
                       metric: str, bins: Sequence[Bin], correction: str, alpha: float) -> pd.DataFrame:
    """One record per (system, bin): the mean of `metric` over the bin's queries, their count, and the Welch test
    against the first bin. `systems` maps system names (models, the retriever) to row labels; queries without a
    position are left out (the caller reports how many)."""
    values = averaged[averaged["metric"] == metric]
    records = []
    for system, label in systems.items():
        rows = values[values["system"] == system]
        if rows.empty:
            raise InputError(f"no per-query values of {metric} for {system!r}")
        placed = rows[rows["qid"].isin(positions)]
        groups = [[] for _ in bins]
        for qid, value in zip(placed["qid"], placed["value"]):
            groups[bin_of(positions[qid], bins)].append(value)
        for i, (b, group) in enumerate(zip(bins, groups)):
            mean = sum(group) / len(group) if group else math.nan
            t, p = (math.nan, math.nan) if i == 0 else welch_t_test(group, groups[0])
            records.append({"system": system, "label": label, "bin": i, "bin_label": b.label, "low": b.low,
                            "high": b.high, "n_queries": len(group), "value": mean, "t": t, "p": p})
    table = pd.DataFrame.from_records(records)
    table["p_adjusted"] = adjust(table["p"].to_numpy(), correction)
    table["alpha"] = alpha
    table["significant"] = table["p_adjusted"] < alpha
    return table
