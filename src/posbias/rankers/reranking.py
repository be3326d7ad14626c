"""Reranking query sets' candidate files with a ranker in memory, and the ranker a `models.<name>` block builds
from its pretrained weights: what the training, fine-tuning, cross-validation and rerank jobs share."""

from __future__ import annotations

import json
import logging

from posbias.backbones import load_tokenizer
from posbias.data.token_store import TokenStore
from posbias.io import atomic_write, nonempty, read_queries, read_run, write_run
from posbias.rankers.inference import rerank
from posbias.rankers.registry import build_ranker, tokenizer_name

log = logging.getLogger(__name__)


def write_rerank_info(run: str, info: dict) -> None:
    """Record how a run was scored (device, autocast dtype, pairs) next to it, as `<run>.json`."""
    with atomic_write(f"{run}.json") as out:
        json.dump(info, out, indent=2, sort_keys=True)
        out.write("\n")


def rerank_with(ranker, tokenizer, tokens: list[str], queries: list[str], candidates: list[str], runs: list[str],
                tag: str, scoring: dict, progress: bool = True, keep_qids: set[str] | None = None) -> None:
    """Rerank each (token store, queries, candidates) triple into its run file (and `<run>.json`, how it was
    scored). `scoring` is the config's `rerank` section without its query sets: `batch_size`, `device`
    and `precision` (the backbone's autocast: auto, bf16, fp16 or fp32). `keep_qids` limits the queries."""
    settings = {"batch_size": 32, "device": "auto", "precision": "auto", **scoring}
    memo: dict = {}  # one ranker's scores across the query sets (posbias.rankers.inference.rerank)
    for tokens_path, queries_path, candidates_path, run in zip(tokens, queries, candidates, runs, strict=True):
        log.info("reranking %s", candidates_path)
        pool = nonempty(read_run(candidates_path), candidates_path, "candidates")
        if keep_qids is not None:
            pool = {q: scores for q, scores in pool.items() if q in keep_qids}
        with TokenStore(tokens_path) as store:
            scores, info = rerank(ranker, tokenizer, read_queries(queries_path), store, pool, progress=progress,
                                  source=candidates_path, memo=memo, **settings)
        write_run(run, scores, tag=tag)
        write_rerank_info(run, {**info, "candidates": candidates_path, "precision": settings["precision"]})


def pretrained_ranker(model: dict):
    """The ranker of a `models.<name>` block as its pretrained weights give it (no training), and the tokenizer it
    reads with: what a zero-shot model scores with."""
    ranker = build_ranker(model["ranker"], {k: v for k, v in model["args"].items() if k != "tokenizer"})
    tokenizer = load_tokenizer(tokenizer_name(model["args"]), bool(model["args"].get("trust_remote_code")))
    return ranker.eval(), tokenizer
