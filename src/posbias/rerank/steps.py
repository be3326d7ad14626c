"""The rerank stage's jobs: a trained checkpoint's or a zero-shot model's reranking of query sets' candidates, and
RankGPT's listwise reranking through a language model.

The language model's answers go through the response cache (`llm.cache`), so a run made once with an API can be
made again, bit for bit, offline (`read_only`), and the per-query latency recorded with each answer is what the
efficiency figure (the study's Figure 3) reads, replayed or not.
"""

from __future__ import annotations

import logging

import torch

from posbias.io import nonempty, read_documents, read_queries, read_run, write_run
from posbias.rankers.checkpoint import load_checkpoint
from posbias.rerank.jobs import ListwiseJob
from posbias.rankers.registry import pretrained_ranker
from posbias.scoring.reranking import Reranking, rerank_with, write_rerank_info
from posbias.training.loop import seed_everything

log = logging.getLogger(__name__)


def rerank_pretrained(model: dict, reranking: Reranking, threads: int, progress: bool = True) -> None:
    """Rerank the query sets of `reranking` with a zero-shot model (`models.<name>.zero_shot`), built once from its
    pretrained weights."""
    torch.set_num_threads(threads)
    seed_everything(0)  # a ranker with a freshly initialised head would depend on it; the bi-encoder has none
    ranker, tokenizer = pretrained_ranker(model)
    rerank_with(reranking.scorer(ranker, tokenizer, progress), reranking)


def rerank_candidates(checkpoint: str, reranking: Reranking, threads: int, progress: bool = True) -> None:
    """Load a checkpoint once and rerank each (token store, queries, candidates) triple of `reranking` into its run
    file."""
    from posbias.device import pick_device

    pick_device(reranking.scoring.get("device", "auto"))  # a missing GPU stops the job before anything loads
    torch.set_num_threads(threads)
    rerank_with(reranking.scorer(*load_checkpoint(checkpoint), progress), reranking)


def rerank_listwise(job: ListwiseJob) -> None:
    """Rerank the candidates of one query set with RankGPT into `job.run`, and `<run>.json` (how it was scored)."""
    from posbias.llm.generate import open_model
    from posbias.rankers import rankgpt

    llm, candidates, run = job.llm, job.candidates, job.run
    settings = rankgpt.RankGPTSettings.from_config({k: v for k, v in job.args.items() if k != "llm"},
                                                   what="models.<name>.args")
    model = open_model(llm, job.cache["dir"], job.cache["mode"], what=f"llm.models.{job.llm_name}")
    pool = nonempty(read_run(candidates), candidates, "candidates")
    ranked = {qid: rankgpt.first_stage_order(scores) for qid, scores in pool.items()}
    wanted = {d for order in ranked.values() for d in order[:settings.rank_end]}
    texts = read_documents(job.docs, keep=wanted)
    ordered, latency = rankgpt.rerank_listwise(model, read_queries(job.queries), ranked, texts, settings)
    write_run(run, {qid: dict(pairs) for qid, pairs in ordered.items()}, tag=job.tag)  # scores: -rank
    calls = sum(len(rankgpt.sliding_windows(len(order), settings.window, settings.step, settings.rank_end))
                for order in ranked.values())
    model_seconds = 0.0 if llm.get("backend") == "mock" else round(sum(latency.values()), 4)
    write_rerank_info(run, {"device": "language model", "llm": llm.get("model"), "backend": llm.get("backend"),
                            "candidates": candidates, "queries": len(ordered), "calls": calls,
                            # Figure 3 times RankGPT by its per-query API latency, as the study did; a mock's
                            # answers take no model time worth a ratio (0: left out of the figure)
                            "scoring_seconds": model_seconds})
    log.info("RankGPT reranked %d queries with %s: %d calls, %.1f s of model latency", len(ordered),
             llm.get("model"), calls, sum(latency.values()))
