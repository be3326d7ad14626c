"""The first stage's jobs as typed values, where a job takes more than a handful of settings: what it reads, writes
and is told, built in one place by its rule's script and by its `posbias` command."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class HybridRetriever:
    """A hybrid retriever of the config (`retrievers.<name>`, kind hybrid): its query encoder, the weight of the
    cosine in the fusion, and the BM25 parameters of the retriever it names as its partner."""

    name: str  # the run's tag
    encoder: Mapping
    weight: float
    k1: float
    b: float


@dataclass(frozen=True)
class HybridJob:
    """Hybrid candidates of one query set: the dense k-NN of its queries in `dense_index`, re-scored with the BM25
    scores of `lucene_index`, the top `depth` written to `run`."""

    retriever: HybridRetriever
    dense_index: str
    lucene_index: str
    queries: str
    run: str
    depth: int
