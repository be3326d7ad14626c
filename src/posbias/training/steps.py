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
from posbias.rankers.reranking import pretrained_ranker, rerank_with
from posbias.settings import from_section
from posbias.training.loop import seed_everything, train
from posbias.training.recipe import TrainingSettings
from posbias.training.resume import fingerprint
from posbias.training.sampler import candidate_numbers

log = logging.getLogger(__name__)


def fit(model: dict, training: dict, seed: int, tokens: str, queries: str, qrels: dict, candidates: str,
        threads: int, progress: bool = True, init_checkpoint: str | None = None, state_dir: str | None = None,
        name: str | None = None):
    """Fine-tune the ranker of a `models.<name>` block on the judged queries in `qrels`.

    `tokens` is the token store of the collection. `init_checkpoint` starts from a trained
    checkpoint instead of the pretrained backbone (Robust04 fine-tuning of MS MARCO models).
    `state_dir` holds the resumable training state. Returns the ranker, its tokenizer and a summary.
    """
    texts = read_queries(queries)
    unknown = sorted(set(qrels) - set(texts))
    if unknown:
        raise InputError(f"{len(unknown)} judged training queries are not in {queries}, e.g. {unknown[:3]}")
    # before the model is loaded: a bad recipe fails fast
    settings = from_section(TrainingSettings, {**learning_rates(model), **training}, "training")
    torch.set_num_threads(threads)
    seed_everything(seed)  # before construction: the head's initial weights depend on it
    if init_checkpoint:
        ranker, tokenizer = load_checkpoint(init_checkpoint)
    else:
        # `tokenizer` picks what to read with; the ranker itself never needs it (its checkpoint keeps the files)
        ranker, tokenizer = pretrained_ranker(model)
    store = TokenStore(tokens)
    pool = candidate_numbers(iter_run(candidates), store, set(qrels), candidates)
    if not pool:
        raise InputError(f"{candidates}: no candidates for any of the {len(qrels)} judged training queries")
    summary = train(ranker, tokenizer, texts, store, qrels, pool, settings, seed=seed, progress=progress,
                    state_dir=state_dir, name=name)
    return ranker, tokenizer, summary


def state_dir_of(output: str) -> str:
    """Where a job writing `output` keeps its resumable training state: beside it."""
    return f"{output}.resume"


def train_model(model: dict, training: dict, seed: int, tokens: str, queries: str, qrels: str,
                candidates: str, out_dir: str, threads: int, progress: bool = True, name: str | None = None,
                init_checkpoint: str | None = None):
    """Fine-tune the ranker described by a `models.<name>` config block, from its pretrained backbone or from
    `init_checkpoint` (the fine-tuned setting); save a checkpoint. Returns the trained ranker and its tokenizer.

    Re-running the same job after a kill resumes from its last saved state."""
    from posbias.device import pick_device

    pick_device(training.get("device", "auto"))  # a missing GPU stops the job before anything loads
    state_dir = state_dir_of(out_dir)
    ranker, tokenizer, summary = fit(model, training, seed, tokens, queries,
                                     nonempty(read_qrels(qrels), qrels, "judgments"), candidates, threads, progress,
                                     init_checkpoint=init_checkpoint, state_dir=state_dir, name=name)
    # the data it trained on belongs to its identity: a de-biased twin has its original's config but other tokens
    inputs = {"tokens": tokens, "queries": queries, "qrels": qrels, "candidates": candidates}
    provenance = checkpoint_provenance(model, training, seed, summary, init_checkpoint, inputs)
    save_checkpoint(ranker, tokenizer, out_dir, extra={"seed": seed, "training": summary}, provenance=provenance)
    shutil.rmtree(state_dir, ignore_errors=True)  # the checkpoint is complete: nothing left to resume
    return ranker, tokenizer


def finetune_and_rerank(init_checkpoint: str, model: dict, training: dict, seed: int, train: dict, rerank: dict,
                        out_dir: str, tag: str, scoring: dict, threads: int, name: str | None = None,
                        progress: bool = True) -> None:
    """The fine-tuned setting in one job: fine-tune a trained checkpoint on `train` (its `tokens`, `queries`,
    `qrels` and `candidates`), save it, and rerank each query set of `rerank` (lists of `tokens`, `queries`,
    `candidates` and `runs`) with the model still in memory, instead of loading it again in a job per query
    set: the demo fine-tunes every checkpoint, and each job pays a few seconds of imports and loading."""
    ranker, tokenizer = train_model(model, training, seed, train["tokens"], train["queries"], train["qrels"],
                                    train["candidates"], out_dir, threads, progress, name, init_checkpoint)
    rerank_with(ranker, tokenizer, rerank["tokens"], rerank["queries"], rerank["candidates"], rerank["runs"], tag,
                scoring, progress)


def finetune_job(init_checkpoint: str, inputs, outputs, params, scoring: dict, threads: int,
                 prefix: str = "") -> None:
    """`finetune_and_rerank` from a Snakemake job's named inputs, outputs and params (rule finetune, and rule
    rerank_checkpoint, where their names carry `prefix`)."""
    def named(section, key):
        return section[prefix + key]

    finetune_and_rerank(
        init_checkpoint, named(params, "model"), named(params, "training"), named(params, "seed"),
        train={key: named(inputs, key) for key in ("tokens", "queries", "qrels", "candidates")},
        rerank={"tokens": list(named(inputs, "rerank_tokens")), "queries": list(named(inputs, "rerank_queries")),
                "candidates": list(named(inputs, "rerank_candidates")), "runs": list(named(outputs, "runs"))},
        out_dir=named(outputs, "checkpoint"), tag=named(params, "tag"), scoring=scoring, threads=threads,
        name=named(params, "name"))
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
