"""Pipeline steps of the first stage: index, retrieve, and the random-shuffle baseline."""

from __future__ import annotations

import random

from posbias.io import read_queries, read_run, write_run
from posbias.retrieval import bm25


def index(docs: str, index_dir: str, threads: int) -> None:
    bm25.build_index(docs, index_dir, threads)


def retrieve(index_dir: str, queries: str, run: str, k: int, k1: float, b: float, threads: int) -> None:
    write_run(run, bm25.search(index_dir, read_queries(queries), k, k1, b, threads), tag="bm25")


def random_shuffle(candidates: str, run: str, seed: int) -> None:
    """Rank each query's candidates in a seeded random order: the chance baseline."""
    rng = random.Random(seed)
    shuffled = {}
    for qid, scores in read_run(candidates).items():
        docs = sorted(scores)
        rng.shuffle(docs)
        shuffled[qid] = {doc: float(len(docs) - rank) for rank, doc in enumerate(docs)}
    write_run(run, shuffled, tag=f"random{seed}")
