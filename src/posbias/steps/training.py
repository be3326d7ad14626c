"""Pipeline steps of the rankers: train one model with one seed, rerank candidates with it."""

from __future__ import annotations

import json
import logging
import shutil

import torch

from posbias.backbones import load_tokenizer
from posbias.config.sections.models import learning_rates, tokenizer_name
from posbias.data.token_store import TokenStore
from posbias.errors import InputError
from posbias.io import atomic_write, iter_run, nonempty, read_qrels, read_queries, read_run, write_run
from posbias.provenance.identity import checkpoint_provenance
from posbias.rankers.checkpoint import load_checkpoint, save_checkpoint
from posbias.rankers.inference import rerank
from posbias.rankers.registry import build_ranker
from posbias.settings import from_section
from posbias.training.loop import seed_everything, train
from posbias.training.recipe import TrainingSettings
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


def rerank_pretrained(model: dict, tokens: str | list[str], queries: str | list[str], candidates: str | list[str],
                      runs: list[str], tag: str, scoring: dict, threads: int, progress: bool = True) -> None:
    """Rerank query sets with a zero-shot model (`models.<name>.zero_shot`), built once from its pretrained weights:
    one (token store, queries, candidates) triple per run, or lists of them aligned with `runs`."""
    torch.set_num_threads(threads)
    seed_everything(0)  # a ranker with a freshly initialised head would depend on it; the bi-encoder has none
    ranker, tokenizer = pretrained_ranker(model)
    listed = [[x] if isinstance(x, str) else list(x) for x in (tokens, queries, candidates)]
    rerank_with(ranker, tokenizer, *listed, runs, tag, scoring, progress)


def rerank_candidates(checkpoint: str, tokens: list[str], queries: list[str], candidates: list[str],
                      runs: list[str], tag: str, scoring: dict, threads: int, progress: bool = True) -> None:
    """Load a checkpoint once and rerank each (token store, queries, candidates) triple into its run file."""
    from posbias.device import pick_device

    pick_device(scoring.get("device", "auto"))  # a missing GPU stops the job before anything loads
    torch.set_num_threads(threads)
    ranker, tokenizer = load_checkpoint(checkpoint)
    rerank_with(ranker, tokenizer, tokens, queries, candidates, runs, tag, scoring, progress)


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
