"""Pipeline steps of the rankers: train one model with one seed, rerank candidates with it."""

from __future__ import annotations

import logging

import torch

from posbias.backbones import load_tokenizer
from posbias.io import read_documents, read_qrels, read_queries, read_run, write_run
from posbias.rankers.checkpoint import load_checkpoint, save_checkpoint
from posbias.rankers.inference import rerank
from posbias.rankers.registry import build_ranker
from posbias.training.loop import TrainingSettings, seed_everything, train

log = logging.getLogger(__name__)


def fit(model: dict, training: dict, seed: int, docs: str, queries: str, qrels: dict, candidates: str,
        threads: int, progress: bool = True, init_checkpoint: str | None = None):
    """Fine-tune the ranker of a `models.<name>` block on the judged queries in `qrels`.

    `init_checkpoint` starts from a trained checkpoint instead of the pretrained backbone
    (Robust04 fine-tuning of MS MARCO models). Returns the ranker, its tokenizer and a summary.
    """
    texts = read_queries(queries)
    unknown = sorted(set(qrels) - set(texts))
    if unknown:
        raise KeyError(f"{len(unknown)} judged training queries are not in {queries}, e.g. {unknown[:3]}")
    torch.set_num_threads(threads)
    seed_everything(seed)  # before construction: the head's initial weights depend on it
    if init_checkpoint:
        ranker, tokenizer = load_checkpoint(init_checkpoint)
    else:
        ranker = build_ranker(model["ranker"], model["args"])
        tokenizer = load_tokenizer(model["args"]["backbone"], bool(model["args"].get("trust_remote_code")))
    settings = TrainingSettings(lr=model["lr"], head_lr=model["head_lr"], **training)
    pool = read_run(candidates)
    needed = {d for judged in qrels.values() for d in judged} | {d for q in qrels for d in pool.get(q, {})}
    summary = train(ranker, tokenizer, texts, read_documents(docs, keep=needed), qrels,
                    pool, settings, seed=seed, progress=progress)
    return ranker, tokenizer, summary


def train_model(model: dict, training: dict, seed: int, docs: str, queries: str, qrels: str,
                candidates: str, out_dir: str, threads: int, progress: bool = True) -> None:
    """Fine-tune the ranker described by a `models.<name>` config block; save a checkpoint."""
    ranker, tokenizer, summary = fit(model, training, seed, docs, queries, read_qrels(qrels), candidates,
                                     threads, progress)
    save_checkpoint(ranker, tokenizer, out_dir, extra={"seed": seed, "training": summary})


def rerank_with(ranker, tokenizer, docs: list[str], queries: list[str], candidates: list[str], runs: list[str],
                tag: str, batch_size: int, device: str, progress: bool = True,
                keep_qids: set[str] | None = None) -> None:
    """Rerank each (documents, queries, candidates) triple into its run file; `keep_qids` limits the queries."""
    for docs_path, queries_path, candidates_path, run in zip(docs, queries, candidates, runs, strict=True):
        log.info("reranking %s", candidates_path)
        pool = read_run(candidates_path)
        if keep_qids is not None:
            pool = {q: scores for q, scores in pool.items() if q in keep_qids}
        needed = {d for scores in pool.values() for d in scores}
        scores = rerank(ranker, tokenizer, read_queries(queries_path), read_documents(docs_path, keep=needed),
                        pool, batch_size=batch_size, device=device, progress=progress)
        write_run(run, scores, tag=tag)


def rerank_candidates(checkpoint: str, docs: list[str], queries: list[str], candidates: list[str],
                      runs: list[str], tag: str, batch_size: int, device: str, threads: int,
                      progress: bool = True) -> None:
    """Load a checkpoint once and rerank each (documents, queries, candidates) triple into its run file."""
    torch.set_num_threads(threads)
    ranker, tokenizer = load_checkpoint(checkpoint)
    rerank_with(ranker, tokenizer, docs, queries, candidates, runs, tag, batch_size, device, progress)


def finetune_and_rerank(init_checkpoint: str, model: dict, training: dict, seed: int, train_docs: str,
                        train_queries: str, train_qrels: str, train_candidates: str, docs: list[str],
                        queries: list[str], candidates: list[str], runs: list[str], tag: str, batch_size: int,
                        device: str, threads: int, progress: bool = True) -> None:
    """The fine-tuned setting: start from a trained checkpoint, fine-tune on another query set's
    judgments (FarRelevant train), rerank with the result. The fine-tuned model is not saved."""
    ranker, tokenizer, summary = fit(model, training, seed, train_docs, train_queries, read_qrels(train_qrels),
                                     train_candidates, threads, progress, init_checkpoint=init_checkpoint)
    log.info("fine-tuned %s: %s", init_checkpoint, summary)
    rerank_with(ranker, tokenizer, docs, queries, candidates, runs, tag, batch_size, device, progress)
