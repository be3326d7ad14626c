"""The FarRelevant build from a passage collection as a typed value, built in one place by the rule's script and by
`posbias farrelevant`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class FarRelevantJob:
    """Documents built from the passage collection `passages` for the judged queries of `queries` and `qrels`:
    `settings` (`farrelevant.*`: seed, queries per set, the first window, the length), the tokenizer that counts
    their tokens; written under `out_dir` as the test query set `queryset` (and `train_queryset`), with the JSONL
    documents of `negatives` joining the corpus unjudged."""

    passages: str
    queries: str
    qrels: str
    settings: Mapping
    tokenizer: str
    out_dir: str
    queryset: str
    train_queryset: str | None = None
    negatives: str | None = None
