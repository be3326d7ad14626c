"""The training stage's jobs: train one model with one seed, fine-tune a trained checkpoint and rerank with it
(the fine-tuned setting), and cross-validation.

Cross-validation (Robust04): per fold, fine-tune a trained checkpoint on the other folds and
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

import torch

from posbias.config.sections.models import learning_rates
from posbias.data.token_store import TokenStore
from posbias.errors import InputError
from posbias.io import atomic_write, iter_run, nonempty, read_folds, read_qrels, read_queries, read_run, write_run
from posbias.provenance.identity import checkpoint_provenance
from posbias.rankers.checkpoint import load_checkpoint, save_checkpoint
from posbias.rankers.registry import pretrained_ranker
from posbias.scoring.reranking import Reranking, rerank_with
from posbias.settings import fingerprint, from_section
from posbias.training.jobs import CheckpointFoldsJob, FinetuneJob, FoldJob, Recipe, TrainingSet, TrainJob
from posbias.training.loop import seed_everything, train
from posbias.training.recipe import TrainingSettings
from posbias.training.sampler import candidate_numbers

log = logging.getLogger(__name__)


def fit(recipe: Recipe, inputs: TrainingSet, judged: dict, threads: int, progress: bool = True,
        init_checkpoint: str | None = None, state_dir: str | None = None):
    """Fine-tune the ranker of a `models.<name>` block (`recipe`) on the judged queries in `judged` (a subset of
    `inputs.qrels`), reading the collection's token store, the queries and the candidates of `inputs`.

    `init_checkpoint` starts from a trained checkpoint instead of the pretrained backbone (Robust04 fine-tuning of
    MS MARCO models). `state_dir` holds the resumable training state. Returns the ranker, its tokenizer and a
    summary.
    """
    texts = read_queries(inputs.queries)
    unknown = sorted(set(judged) - set(texts))
    if unknown:
        raise InputError(f"{len(unknown)} judged training queries are not in {inputs.queries}, e.g. {unknown[:3]}")
    # before the model is loaded: a bad recipe fails fast
    settings = from_section(TrainingSettings, {**learning_rates(recipe.model), **recipe.training}, "training")
    torch.set_num_threads(threads)
    seed_everything(recipe.seed)  # before construction: the head's initial weights depend on it
    if init_checkpoint:
        ranker, tokenizer = load_checkpoint(init_checkpoint)
    else:
        # `tokenizer` picks what to read with; the ranker itself never needs it (its checkpoint keeps the files)
        ranker, tokenizer = pretrained_ranker(recipe.model)
    store = TokenStore(inputs.tokens)
    pool = candidate_numbers(iter_run(inputs.candidates), store, set(judged), inputs.candidates)
    if not pool:
        raise InputError(f"{inputs.candidates}: no candidates for any of the {len(judged)} judged training queries")
    summary = train(ranker, tokenizer, texts, store, judged, pool, settings, seed=recipe.seed, progress=progress,
                    state_dir=state_dir, name=recipe.name)
    return ranker, tokenizer, summary


def state_dir_of(output: str) -> str:
    """Where a job writing `output` keeps its resumable training state: beside it."""
    return f"{output}.resume"


def train_model(job: TrainJob):
    """Fine-tune the ranker described by a `models.<name>` config block, from its pretrained backbone or from
    `job.init_checkpoint` (the fine-tuned setting); save a checkpoint. Returns the trained ranker and its
    tokenizer.

    Re-running the same job after a kill resumes from its last saved state."""
    from posbias.device import pick_device

    recipe, inputs = job.recipe, job.inputs
    pick_device(recipe.training.get("device", "auto"))  # a missing GPU stops the job before anything loads
    state_dir = state_dir_of(job.checkpoint)
    ranker, tokenizer, summary = fit(recipe, inputs, nonempty(read_qrels(inputs.qrels), inputs.qrels, "judgments"),
                                     job.threads, job.progress, init_checkpoint=job.init_checkpoint,
                                     state_dir=state_dir)
    # the data it trained on belongs to its identity: a de-biased twin has its original's config but other tokens
    provenance = checkpoint_provenance(recipe.model, recipe.training, recipe.seed, summary, job.init_checkpoint,
                                       inputs.files())
    save_checkpoint(ranker, tokenizer, job.checkpoint, extra={"seed": recipe.seed, "training": summary},
                    provenance=provenance)
    shutil.rmtree(state_dir, ignore_errors=True)  # the checkpoint is complete: nothing left to resume
    return ranker, tokenizer


def rerank_all(ranker, tokenizer, reranking: Reranking, progress: bool = True, keep_qids: set[str] | None = None):
    """Rerank each query set of `reranking` with a ranker in memory."""
    rerank_with(reranking.scorer(ranker, tokenizer, progress), reranking, keep_qids)


def finetune_and_rerank(job: FinetuneJob) -> None:
    """The fine-tuned setting in one job: fine-tune a trained checkpoint on `job.inputs`, save it, and rerank each
    query set of `job.reranking` with the model still in memory, instead of loading it again in a job per query
    set: the demo fine-tunes every checkpoint, and each job pays a few seconds of imports and loading."""
    ranker, tokenizer = train_model(TrainJob(job.recipe, job.inputs, job.checkpoint, threads=job.threads,
                                             init_checkpoint=job.init_checkpoint, progress=job.progress))
    rerank_all(ranker, tokenizer, job.reranking, job.progress)


def finetune_job(init_checkpoint: str, inputs, outputs, params, scoring: dict, threads: int,
                 prefix: str = "") -> FinetuneJob:
    """The fine-tuning job of a Snakemake job's named inputs, outputs and params (rule finetune, and rule
    rerank_checkpoint, where their names carry `prefix`)."""
    def named(section, key):
        return section[prefix + key]

    return FinetuneJob(
        recipe=Recipe(named(params, "model"), named(params, "training"), named(params, "seed"), named(params, "name")),
        init_checkpoint=init_checkpoint,
        inputs=TrainingSet(*(named(inputs, key) for key in ("tokens", "queries", "qrels", "candidates"))),
        reranking=Reranking(list(named(inputs, "rerank_tokens")), list(named(inputs, "rerank_queries")),
                            list(named(inputs, "rerank_candidates")), list(named(outputs, "runs")),
                            tag=named(params, "tag"), scoring=scoring),
        checkpoint=named(outputs, "checkpoint"), threads=threads)


def cross_validate_fold(job: FoldJob) -> None:
    """Fine-tune on every fold but `job.fold`, then rerank only that fold's queries (`job.scoring`: see
    `posbias.scoring.reranking.Reranking`). The fold's training state is kept beside its run until the run is written."""
    assignment = read_folds(job.folds)
    held_out = {q for q, f in assignment.items() if f == job.fold}
    if not held_out:
        raise InputError(f"{job.folds}: fold {job.fold} has no queries")
    judged = {q: d for q, d in read_qrels(job.inputs.qrels).items() if q in assignment and assignment[q] != job.fold}
    log.info("fold %d: fine-tuning on %d judged queries of the other folds, reranking %d queries",
             job.fold, len(judged), len(held_out))
    state_dir = state_dir_of(job.run)
    ranker, tokenizer, _ = fit(job.recipe, job.inputs, judged, job.threads, job.progress,
                               init_checkpoint=job.init_checkpoint, state_dir=state_dir)
    inputs = job.inputs
    rerank_all(ranker, tokenizer, Reranking([inputs.tokens], [inputs.queries], [inputs.candidates], [job.run],
                                            tag=job.tag, scoring=job.scoring), job.progress, keep_qids=held_out)
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


def cross_validate_checkpoint(job: CheckpointFoldsJob) -> None:
    """Every fold of every query set of `job.querysets`, one after another, then each query set's merged run. A
    fold finished by an earlier, interrupted attempt with the same inputs and settings is not run again."""
    recipe = job.recipe
    resume_dir = Path(state_dir_of(job.querysets[0].run))
    for number, queryset in enumerate(job.querysets):
        folds = sorted(set(read_folds(queryset.folds).values()))
        files = {**queryset.inputs.files(), "folds": queryset.folds}
        inputs = {"init": _stamp(job.init_checkpoint), **{k: _stamp(v) for k, v in files.items()}}
        fold_runs = []
        for fold in folds:
            fold_run = resume_dir / f"queryset{number}" / f"fold{fold}.run"
            made_of = fingerprint(inputs=inputs, model=recipe.model, training=recipe.training, seed=recipe.seed,
                                  fold=fold, tag=job.tag, scoring=job.scoring)
            if _finished(fold_run, made_of):
                log.info("%s fold %d: kept from an earlier attempt of this job", queryset.run, fold)
            else:
                cross_validate_fold(FoldJob(recipe, job.init_checkpoint, queryset.inputs, folds=queryset.folds,
                                            fold=fold, run=str(fold_run), tag=job.tag, scoring=job.scoring,
                                            threads=job.threads, progress=job.progress))
                with atomic_write(_made_of_path(fold_run)) as out:
                    json.dump({"fingerprint": made_of}, out)
            fold_runs.append(str(fold_run))
        merge_fold_runs(fold_runs, queryset.folds, queryset.run, job.tag)
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
