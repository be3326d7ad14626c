"""Pipeline steps of the first stage: index, retrieve (BM25 or hybrid), import a given run,
and the random-shuffle baseline."""

from __future__ import annotations

import logging
import random
from pathlib import Path

from posbias.errors import InputError
from posbias.io import nonempty, read_queries, read_ranked_run, read_run, write_run
from posbias.names import GIVEN
from posbias.retrieval import bm25
from posbias.retrieval.jobs import HybridJob

log = logging.getLogger(__name__)


def index(docs: str, index_dir: str, threads: int, expansions: str | None = None,
          expansions_sha256: str | None = None) -> None:
    """Build a Lucene index; doc2query expansions (a file, checked against its sha256 when one is given) are
    joined to the documents first."""
    from posbias.data.sources.expansions import read_expansions
    from posbias.staging.checksums import verify

    if expansions and not Path(expansions).exists():
        raise InputError(f"doc2query expansions {expansions} (collections.<name>.expansions) do not exist")
    if expansions:
        verify(expansions, expansions_sha256, "collections.<name>.expansions_sha256")
    bm25.build_index(docs, index_dir, threads, read_expansions(expansions) if expansions else None)


def retrieve(index_dir: str, queries: str, run: str, k: int, k1: float, b: float, threads: int,
             tag: str = "bm25") -> None:
    texts = nonempty(read_queries(queries), queries, "queries")
    write_run(run, bm25.search(index_dir, texts, k, k1, b, threads), tag=tag)


def import_run(given: str, queries: str, run: str, depth: int) -> None:
    """Use a precomputed TREC run as candidates: each query's top `depth`, checked against the query set.

    The given order is the run's scores, descending, with tied scores in the order of its rank column (a
    listwise reranker may give every document the same score), then trec_eval's doc id descending. Each query
    is cut at `depth` in that order. A query whose cut list still has tied scores gets strictly decreasing
    scores (n, n - 1, ..., 1 for n candidates) in that order: evaluation and every later stage order by score,
    then by doc id, and would otherwise lose the given order. Other queries keep their scores exactly.
    """
    known = read_queries(queries)
    candidates = read_ranked_run(given)
    unknown = sorted(set(candidates) - set(known))
    if unknown and len(unknown) == len(candidates):
        raise InputError(f"{given}: none of its {len(unknown)} queries is in {queries} (first: {unknown[:5]})")
    if unknown:  # e.g. a run for all of a track's topics, of which the query set holds the judged ones
        log.warning("%s: %d queries are not in %s and are left out (first: %s)", given, len(unknown), queries,
                    unknown[:5])
        candidates = {qid: entries for qid, entries in candidates.items() if qid in known}
    missing = len(known) - len(set(candidates) & set(known))
    if missing:
        log.warning("%s: %d of %d queries have no candidates", given, missing, len(known))
    top, rescored = {}, 0
    for qid, entries in candidates.items():
        ranked = sorted(entries, reverse=True)  # doc id descending, within ...
        ranked.sort(key=lambda doc: (-entries[doc][1], entries[doc][0]))  # ... score desc, rank asc (stable)
        scores = {doc: entries[doc][1] for doc in ranked[:depth]}
        if len(set(scores.values())) < len(scores):
            scores = {doc: float(len(scores) - position) for position, doc in enumerate(scores)}
            rescored += 1
        top[qid] = scores
    if rescored:
        log.warning("%s: %d of %d queries have tied scores in their top %d; their scores are replaced by "
                    "decreasing ones in the run's rank order", given, rescored, len(top), depth)
    write_run(run, top, tag=GIVEN)


def random_shuffle(candidates: str, run: str, seed: int) -> None:
    """Rank each query's candidates in a seeded random order: the chance baseline."""
    rng = random.Random(seed)
    shuffled = {}
    for qid, scores in read_run(candidates).items():
        docs = sorted(scores)
        rng.shuffle(docs)
        shuffled[qid] = {doc: float(len(docs) - rank) for rank, doc in enumerate(docs)}
    write_run(run, shuffled, tag=f"random{seed}")


def dense_encode(docs: str, vectors_dir: str, encoder: dict, threads: int) -> None:
    """Encode a collection into a memory-mapped vector matrix (the GPU job); a rerun resumes a killed one."""
    from posbias.retrieval.vectors import encode_collection

    _set_threads(threads)
    encode_collection(docs, vectors_dir, encoder)


def dense_index(vectors_dir: str, index_dir: str, faiss_settings: dict, threads: int) -> None:
    """Build a FAISS index from a vector matrix (the CPU job); a rerun resumes a killed HNSW or IVF build."""
    from posbias.retrieval.index_build import build_index

    _set_threads(threads)
    build_index(vectors_dir, index_dir, faiss_settings)


def encode_and_index(docs: str, index_dir: str, encoder: dict, faiss_settings: dict, threads: int) -> None:
    """Both in one process (`posbias dense-index`); the vectors stay in `<index_dir>.vectors`."""
    from posbias.retrieval.index_build import build_dense_index

    _set_threads(threads)
    build_dense_index(docs, index_dir, encoder, faiss_settings)


def _set_threads(threads: int) -> None:
    import faiss
    import torch

    torch.set_num_threads(threads)
    faiss.omp_set_num_threads(threads)


def hybrid_retrieve(job: HybridJob, threads: int) -> None:
    """Dense k-NN candidates re-scored by the linear fusion of BM25 and cosine scores."""
    from posbias.retrieval.hybrid import hybrid_search

    _set_threads(threads)
    texts = nonempty(read_queries(job.queries), job.queries, "queries")
    retriever = job.retriever
    fused = hybrid_search(texts, job.dense_index, job.lucene_index, retriever.encoder, job.depth,
                          retriever.k1, retriever.b, retriever.weight, threads)
    write_run(job.run, fused, tag=retriever.name)
