"""Cross-validation (Robust04): per fold, fine-tune a trained checkpoint on the other folds and
rerank the held-out fold with it; then merge the fold runs into one run.

Fine-tuning and reranking a fold are one step, so the fold models (one per model, seed, fold and
query set: hundreds of BERT-sized checkpoints in the study's setting) never reach the disk.

A workflow either gives every fold its own job (`cross_validation.jobs: per_fold`, then a merge job per query set)
or gives a checkpoint one job for all its cross-validated query sets and their folds (`per_checkpoint`:
`cross_validate_checkpoint`, which on a cluster turns the study's 930 fold jobs and 186 merges into 93 jobs). Such a
job keeps each finished fold's run in a resume directory beside its first output, so a job stopped by a time limit
or a pre-emption goes on with the next fold when it runs again; a fold run made from other inputs or settings is
never reused.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

from posbias.errors import InputError
from posbias.io import atomic_write, read_folds, read_qrels, read_run, write_run
from posbias.steps.training import fit, rerank_with, state_dir_of
from posbias.training.resume import fingerprint

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


def cross_validate_checkpoint(init_checkpoint: str, model: dict, training: dict, seed: int, querysets: list[dict],
                              tag: str, scoring: dict, threads: int, progress: bool = True,
                              name: str | None = None) -> None:
    """Every fold of every query set in `querysets` (each a dict of tokens, queries, qrels, candidates, folds and
    run: the merged run), one after another, then each query set's merged run. A fold finished by an earlier,
    interrupted attempt with the same inputs and settings is not run again."""
    resume_dir = Path(state_dir_of(querysets[0]["run"]))
    for number, files in enumerate(querysets):
        folds = sorted(set(read_folds(files["folds"]).values()))
        inputs = {"init": _stamp(init_checkpoint), **{k: _stamp(v) for k, v in files.items() if k != "run"}}
        fold_runs = []
        for fold in folds:
            fold_run = resume_dir / f"queryset{number}" / f"fold{fold}.run"
            made_of = fingerprint(inputs=inputs, model=model, training=training, seed=seed, fold=fold, tag=tag,
                                  scoring=scoring)
            if _finished(fold_run, made_of):
                log.info("%s fold %d: kept from an earlier attempt of this job", files["run"], fold)
            else:
                cross_validate_fold(init_checkpoint, model, training, seed, tokens=files["tokens"],
                                    queries=files["queries"], qrels=files["qrels"], candidates=files["candidates"],
                                    folds=files["folds"], fold=fold, run=str(fold_run), tag=tag, scoring=scoring,
                                    threads=threads, progress=progress, name=name)
                with atomic_write(_made_of_path(fold_run)) as out:
                    json.dump({"fingerprint": made_of}, out)
            fold_runs.append(str(fold_run))
        merge_fold_runs(fold_runs, files["folds"], files["run"], tag)
    shutil.rmtree(resume_dir, ignore_errors=True)


def _stamp(path: str) -> list:
    """What identifies an input's version cheaply: the size and modification time of each of its files (Snakemake
    rewrites an input it reruns, so a changed input has a new stamp)."""
    root = Path(path)
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
    return [(str(f.relative_to(root)) if root.is_dir() else f.name, *_size_and_time(f)) for f in files]


def _size_and_time(path: Path) -> tuple[int, int]:
    stat = os.stat(path)
    return stat.st_size, stat.st_mtime_ns


def _made_of_path(fold_run: Path) -> Path:
    return fold_run.with_name(fold_run.name + ".made-of.json")


def _finished(fold_run: Path, made_of: str) -> bool:
    """Whether an earlier attempt finished this fold from the same inputs and settings."""
    try:
        return fold_run.exists() and json.loads(_made_of_path(fold_run).read_text())["fingerprint"] == made_of
    except (OSError, ValueError, KeyError):
        return False
