"""Cross-validation (Robust04): per fold, fine-tune a trained checkpoint on the other folds and
rerank the held-out fold with it; then merge the fold runs into one run.

Fine-tuning and reranking a fold are one step, so the fold models (one per model, seed, fold and
query set: hundreds of BERT-sized checkpoints in the study's setting) never reach the disk.
"""

from __future__ import annotations

import logging
import shutil

from posbias.errors import InputError
from posbias.io import read_folds, read_qrels, read_run, write_run
from posbias.steps.training import fit, rerank_with, state_dir_of

log = logging.getLogger(__name__)


def cross_validate_fold(init_checkpoint: str, model: dict, training: dict, seed: int, tokens: str, queries: str,
                        qrels: str, candidates: str, folds: str, fold: int, run: str, tag: str,
                        scoring: dict, threads: int, progress: bool = True, name: str | None = None) -> None:
    """Fine-tune on every fold but `fold`, then rerank only `fold`'s queries (`scoring`: see `rerank_with`).
    The fold's training state is kept beside its run until the run is written."""
    assignment = read_folds(folds)
    held_out = {q for q, f in assignment.items() if f == fold}
    if not held_out:
        raise InputError(f"{folds}: fold {fold} has no queries")
    judged = {q: d for q, d in read_qrels(qrels).items() if q in assignment and assignment[q] != fold}
    log.info("fold %d: fine-tuning on %d judged queries of the other folds, reranking %d queries",
             fold, len(judged), len(held_out))
    state_dir = state_dir_of(run)
    ranker, tokenizer, _ = fit(model, training, seed, tokens, queries, judged, candidates, threads, progress,
                               init_checkpoint=init_checkpoint, state_dir=state_dir, name=name)
    rerank_with(ranker, tokenizer, [tokens], [queries], [candidates], [run], tag, scoring, progress,
                keep_qids=held_out)
    shutil.rmtree(state_dir, ignore_errors=True)


def merge_fold_runs(fold_runs: list[str], folds: str, run: str, tag: str) -> None:
    """Join the runs of folds 1..k into one run; each must hold only its own fold's queries."""
    assignment = read_folds(folds)
    merged: dict[str, dict[str, float]] = {}
    for fold, path in enumerate(fold_runs, start=1):
        for qid, scores in read_run(path).items():
            if assignment.get(qid) != fold:
                raise InputError(f"{path}: query {qid} belongs to fold {assignment.get(qid)}, not fold {fold}")
            merged[qid] = scores
    log.info("merged %d fold runs: %d queries", len(fold_runs), len(merged))
    write_run(run, merged, tag=tag)
