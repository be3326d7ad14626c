"""Reranking: score each query's candidates with a trained ranker.

Pairs are sorted by document length so each batch pads to similar lengths,
and only chunks holding document text are encoded.
"""

from __future__ import annotations

import torch
from tqdm import tqdm

from posbias.rankers.chunking import Chunker
from posbias.rankers.registry import ChunkRanker
from posbias.training.device import autocast, autocast_dtype, pick_device


@torch.inference_mode()
def rerank(ranker: ChunkRanker, tokenizer, queries: dict[str, str], documents: dict[str, str],
           candidates: dict[str, dict[str, float]], batch_size: int = 32, device: str = "auto",
           precision: str = "auto", progress: bool = True) -> dict[str, dict[str, float]]:
    """Return a run with the ranker's score for every (query, candidate) pair."""
    missing_queries = sorted(set(candidates) - set(queries))
    if missing_queries:
        raise KeyError(f"{len(missing_queries)} queries in the candidates have no text, e.g. {missing_queries[:3]}")
    torch_device = pick_device(device)
    dtype = autocast_dtype(torch_device, precision)
    ranker.to(torch_device).eval()
    chunker = Chunker(tokenizer, ranker.geometry)
    doc_set = sorted({d for scored in candidates.values() for d in scored})
    absent = [d for d in doc_set if d not in documents]
    if absent:
        raise KeyError(f"{len(absent)} candidate documents are not in the collection, e.g. {absent[:3]}")
    doc_ids = dict(zip(doc_set, chunker.tokenize_documents([documents[d] for d in doc_set])))
    qids = sorted(candidates)
    query_ids = dict(zip(qids, chunker.tokenize_queries([queries[q] for q in qids])))
    pairs = sorted(((q, d) for q in qids for d in candidates[q]), key=lambda qd: (len(doc_ids[qd[1]]), qd))
    run: dict[str, dict[str, float]] = {q: {} for q in qids}
    for start in tqdm(range(0, len(pairs), batch_size), desc=f"reranking with {ranker.registry_name}",
                      unit="batch", disable=not progress, mininterval=5):
        part = pairs[start:start + batch_size]
        batch = chunker.batch([(query_ids[q], doc_ids[d]) for q, d in part]).to(torch_device)
        with autocast(torch_device, dtype):
            scores = ranker(batch).float().cpu().tolist()
        for (q, d), score in zip(part, scores):
            run[q][d] = score
    return run
