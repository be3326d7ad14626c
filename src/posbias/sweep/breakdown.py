"""Effectiveness by answer position: a query set's metric per system and position bin, each later bin tested
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
from posbias.stats.corrections import adjust
from posbias.stats.unpaired import welch_t_test


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
