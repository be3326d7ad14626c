"""Reranking: score each query's candidates with a trained ranker.

Document token ids are read from a token store one batch at a time. Pairs are sorted by document
length so each batch pads to similar lengths, and only chunks holding document text are encoded.
The backbone may run under autocast; scores come out of an fp32 head (see `ChunkRanker.forward`). In fp32 on the
CPU its linear layers run through oneDNN for the call (`posbias.rankers.onednn`).
How long scoring took (featurisation and forward passes, the documents' token ids already read) is part of
the run's description, for the efficiency figure (the study's Figure 3).
"""

from __future__ import annotations

import logging
import time

import numpy as np
import torch
from tqdm import tqdm

from posbias.data.token_store import TokenStore
from posbias.device import autocast, autocast_dtype, dtype_name, fp32_matmuls, pick_device
from posbias.errors import InputError
from posbias.rankers.base import ChunkRanker
from posbias.rankers.compilation import compiled_backbone
from posbias.rankers.packing import set_packing
from posbias.rankers.onednn import onednn_available, onednn_linears

log = logging.getLogger(__name__)


@torch.inference_mode()
def score_batch(ranker: ChunkRanker, chunker, pairs: list[tuple], device: torch.device, dtype) -> list[float]:
    """The ranker's scores of one batch of (query token ids, document token ids) pairs, laid out by `chunker`
    (`ranker.featurizer(tokenizer)`); the backbone runs under autocast `dtype` (None: fp32)."""
    batch = chunker.batch(pairs)
    with autocast(device, dtype):
        return ranker(batch.to(device)).float().cpu().tolist()  # .cpu() waits for the device


@torch.inference_mode()
def rerank(ranker: ChunkRanker, tokenizer, queries: dict[str, str], store: TokenStore,
           candidates: dict[str, dict[str, float]], batch_size: int = 32, device: str = "auto",
           precision: str = "auto", progress: bool = True, source: str = "the candidates",
           memo: dict | None = None, tf32: bool = True, compile: bool = False, packing: str | bool = "auto"
           ) -> tuple[dict[str, dict[str, float]], dict]:
    """A run with the ranker's score for every (query, candidate) pair, and how it was computed
    (`device`, `autocast`: the backbone's autocast dtype or fp32, `pairs`). `source` names the candidates
    (their file) in errors: a query without text, a document not in the store. `memo`, shared by the calls of one
    ranker, holds the scores by (query text, the document's token ids as the ranker reads them): a pair another
    query set already scored is taken from it (the position sweep's distractors are FarRelevant's documents).
    `tf32` lets a GPU's fp32 matrix products use TF32 when scoring in fp32 (`posbias.device.fp32_matmuls`); `compile`
    compiles the backbone for the call (`posbias.rankers.compilation`); `packing` packs the chunks' real tokens into
    one row (`posbias.rankers.packing`: auto on CUDA)."""
    missing_queries = sorted(set(candidates) - set(queries))
    if missing_queries:
        raise InputError(f"{len(missing_queries)} queries of {source} have no text, e.g. {missing_queries[:3]}")
    torch_device = pick_device(device)
    dtype = autocast_dtype(torch_device, precision)
    matmuls = fp32_matmuls(torch_device, dtype, tf32)
    packed = set_packing(ranker, packing, torch_device)
    ranker.to(torch_device).eval()
    chunker = ranker.featurizer(tokenizer)
    store.check_tokenizer(tokenizer, ranker.geometry.max_doc_tokens)
    qids = sorted(candidates)
    query_ids = dict(zip(qids, chunker.tokenize_queries([queries[q] for q in qids])))
    # A (query text, document) pair is scored once however many queries share it (a position sweep asks the same
    # question of the same distractors at every position); the first query with that text stands for the rest.
    by_text = {}
    for q in qids:
        by_text.setdefault(queries[q], q)
    wanted = [(q, d) for q in qids for d in candidates[q]]
    scored = sorted({(by_text[queries[q]], d) for q, d in wanted})
    pair_queries = [q for q, _ in scored]
    pair_docs = [d for _, d in scored]
    numbers = store.numbers(pair_docs, what=f"candidate documents of {source}")
    lengths = np.minimum(store.counts[numbers], ranker.geometry.max_doc_tokens)
    order = sorted(range(len(pair_docs)), key=lambda i: (lengths[i], pair_queries[i], pair_docs[i]))
    pair_scores: dict[tuple[str, str], float] = {}
    limit = ranker.geometry.max_doc_tokens
    memo_keys = {}
    if memo is not None:
        memo_keys = {i: (queries[pair_queries[i]],
                         np.asarray(store.ids(numbers[i], limit)).tobytes()) for i in order}
        for i in order:
            if memo_keys[i] in memo:
                pair_scores[pair_queries[i], pair_docs[i]] = memo[memo_keys[i]]
        order = [i for i in order if memo_keys[i] not in memo]
    scoring = 0.0  # seconds of featurisation and forward passes, token ids already read (Figure 3)
    fused = not compile and onednn_available(torch_device, dtype)
    with compiled_backbone(ranker, compile), onednn_linears(ranker.encoder.backbone, fused):  # fp32 on a CPU
        for start in tqdm(range(0, len(order), batch_size), desc=f"reranking with {ranker.registry_name}",
                          unit="batch", disable=not progress, mininterval=5):
            part = order[start:start + batch_size]
            pairs = [(query_ids[pair_queries[i]], store.ids(numbers[i], limit)) for i in part]
            started = time.perf_counter()
            scores = score_batch(ranker, chunker, pairs, torch_device, dtype)
            scoring += time.perf_counter() - started
            for i, score in zip(part, scores):
                pair_scores[pair_queries[i], pair_docs[i]] = score
                if memo is not None:
                    memo[memo_keys[i]] = score
    run: dict[str, dict[str, float]] = {q: {} for q in qids}
    for q, d in wanted:
        run[q][d] = pair_scores[by_text[queries[q]], d]
    reused = len(scored) - len(order)
    info = {"device": str(torch_device), "autocast": dtype_name(dtype), "pairs": len(wanted),
            "scoring_seconds": round(scoring, 4), **({"scored_pairs": len(order)} if len(order) < len(wanted) else {}),
            **({"reused_pairs": reused} if reused else {}), **({"fp32_matmul": matmuls} if matmuls else {}),
            **({"packed": True} if packed else {})}
    log.info("reranked %d pairs of %d queries with %s on %s (backbone autocast %s, head fp32)%s%s", len(wanted),
             len(qids), ranker.registry_name, torch_device, info["autocast"],
             f"; {len(order)} distinct (query text, document) pairs scored" if len(order) < len(wanted) else "",
             f", {reused} taken from an earlier query set" if reused else "")
    return run, info
