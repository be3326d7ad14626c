"""The sweep stage's report jobs as typed values: what a job reads, writes and is told, so that each job function
takes one argument and a rule's script and a `posbias sweep` command each build it in one place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class ShownModels:
    """The rankers a table shows (name -> label), the seeds their values are averaged over, and the labels of the
    zero-shot ones (a single run each), which the captions name."""

    labels: Mapping[str, str]
    n_seeds: int
    zero_shot: list[str]


@dataclass(frozen=True)
class SweepReportJob:
    """The sweep's table and figure from the per-seed values on the sweep query set, the passage's placements
    (`positions`) and the candidates; `statistics` and `alpha` test each curve; `first_window` marks FirstP's
    window; `note` ends the caption; with `sensitivity` (tex, csv, md, html), each curve's metric suite too."""

    per_seed: str
    positions: str
    candidates: str
    models: ShownModels
    metric: str
    statistics: Mapping
    alpha: float
    first_window: int
    table: Mapping[str, str]
    figure: list[str]
    note: str = ""
    sensitivity: Mapping[str, str] | None = None


@dataclass(frozen=True)
class BreakdownJob:
    """`tables.position_breakdown` (`spec`: its query set, metric and bins): the seed-averaged values by the bin of
    each query's answer position (`positions`), the first-stage retriever shown as `retriever_label`, tests
    corrected with `correction` and marked at `alpha`."""

    averaged: str
    positions: str
    spec: Mapping
    models: ShownModels
    retriever_label: str
    correction: str
    alpha: float
    outputs: Mapping[str, str]
