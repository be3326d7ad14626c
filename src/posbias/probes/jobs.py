"""The bias probes' report and RAG jobs as typed values: what a job reads, writes and is told, so that each job
function takes one argument and a rule's script and a `posbias probes` command each build it in one place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class ReportJob:
    """The probe table and figures from every scorer's `scores` and `heatmaps` (scorer -> path) and the build's
    `query_table`; p-values corrected with `correction` (`probes.correction`) and marked at `alpha`; `heatmap`: the
    repetition heatmap's bins (`probes.heatmap`); `tables` and `figures` where they go, and `sensitivity` where the
    position sweep's metric suite goes (none: not written)."""

    scores: Mapping[str, str]
    heatmaps: Mapping[str, str]
    query_table: str
    labels: Mapping[str, str]
    correction: str
    alpha: float
    heatmap: Mapping
    tables: Mapping[str, str]
    figures: Mapping[str, list[str]]
    sensitivity: Mapping[str, str] | None = None


@dataclass(frozen=True)
class RagInputs:
    """The poison and foil probes' pairs and the poison's replacements (`posbias probes build`)."""

    poison: str
    foil: str
    replacements: str


@dataclass(frozen=True)
class RagOutputs:
    """The judged answers, the accuracy table's files, and the judge's swap check (its pairs and its figures)."""

    answers: str
    tables: Mapping[str, str]
    judge_pairs: str | None = None
    judge_summary: str | None = None


@dataclass(frozen=True)
class RagJob:
    """RAG poisoning (`probes.rag`: `settings`): each of `readers` (llm.models key -> spec, shown as `labels`) answers
    from each document and without one, and `judge` (shown as `judge_label`) says which answers hold the gold
    answer, through the response cache `cache`; each condition is tested against no document with `correction`
    over a reader's conditions and the threshold `alpha`."""

    settings: Mapping
    inputs: RagInputs
    outputs: RagOutputs
    readers: Mapping[str, Mapping]
    labels: Mapping[str, str]
    judge: Mapping
    cache: Mapping
    correction: str = "holm"
    alpha: float = 0.05
    judge_label: str | None = None
