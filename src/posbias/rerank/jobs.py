"""The rerank stage's listwise job as a typed value, built in one place by the rule's script and by `posbias
rerank --model` (a trained or zero-shot ranker's jobs are a `posbias.scoring.reranking.Reranking`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class ListwiseJob:
    """One query set's candidates reranked by RankGPT through a language model: the ranker's arguments
    (`models.<name>.args`), the spec of the language model they name (`llm.models.<llm_name>`) and the response
    cache (`llm.cache`: `dir` and `mode`); the collection's documents, the queries and the candidates it reads;
    the run it writes (with `<run>.json`) and the run's tag."""

    args: Mapping
    llm: Mapping
    llm_name: str
    cache: Mapping
    docs: str
    queries: str
    candidates: str
    run: str
    tag: str
