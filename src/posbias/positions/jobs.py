"""The first-relevant-position stage's jobs as typed values: what a job reads, writes and is told, so that each job
function takes one argument and a rule's script and a `posbias positions` command each build it in one place."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence


@dataclass(frozen=True)
class QuerySetFiles:
    """The query set whose positions are found: its collection's documents, its queries and its judgments."""

    docs: str
    queries: str
    qrels: str


@dataclass(frozen=True)
class SetOutputs:
    """A set's rows (one per query and document) and its summary; a dense set also writes its judgments and, with
    the order check on, the check's pairs (`consistency`)."""

    rows: str
    summary: str
    judgments: str | None = None
    consistency: str | None = None


@dataclass(frozen=True)
class SparseJob:
    """A sparse-label set (`positions.sets.<name>`, kind sparse): relevant passages matched in the relevant and the
    BM25-retrieved documents. `settings`: `tokenizer`, `bin_tokens` and the `matching` block; `passage_queries`:
    the passage set's queries, whose text must equal the document set's (None: written for these very queries);
    `index` and `retriever`: the BM25 searcher of the retrieved documents."""

    spec: Mapping
    settings: Mapping
    inputs: QuerySetFiles
    passages: str
    passage_qrels: str
    outputs: SetOutputs
    passage_queries: str | None = None
    index: str | None = None
    retriever: Mapping | None = None
    threads: int = 1


@dataclass(frozen=True)
class Judge:
    """A language model judging chunks: its `llm.models` entry, its name there, and the response cache."""

    model: Mapping
    name: str
    cache: Mapping


@dataclass(frozen=True)
class DenseJob:
    """A dense-label set: the chunks of its first `spec["pairs"]` positive pairs judged by `judge`; `passages` and
    `passage_qrels` name the queries' relevant passages, which only the mock oracle judge reads; `order_judges`
    (name -> `llm.models` entry): the order check's further judges."""

    spec: Mapping
    settings: Mapping
    judge: Judge
    inputs: QuerySetFiles
    outputs: SetOutputs
    passages: str | None = None
    passage_qrels: str | None = None
    order_judges: Mapping[str, Mapping] = field(default_factory=dict)


@dataclass(frozen=True)
class ReportJob:
    """The table of shares and Figures 1 and 7 from each set's `rows` and `summaries` (set -> path); `groups`: the
    figure's groups in order; `figure1`: the sets of Figure 1; `truth`: set -> the generator's truth file, whose
    known offsets the `agreement` table checks; the judges' order check table (`judge_tables`, its `judge_labels`;
    `oracle_judges`: mock oracles, consistent by construction)."""

    rows: Mapping[str, str]
    summaries: Mapping[str, str]
    settings: Mapping
    labels: Mapping[str, str]
    groups: Mapping[str, Mapping]
    figure1: list[str]
    tables: Mapping[str, str]
    figures: Mapping[str, list[str]]
    truth: Mapping[str, str]
    agreement: str
    judge_tables: Mapping[str, str] = field(default_factory=dict)
    judge_labels: Mapping[str, str] = field(default_factory=dict)
    oracle_judges: Sequence[str] = ()
