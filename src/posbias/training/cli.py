"""Training by hand (rules/training.smk): one model and seed trained, a checkpoint fine-tuned and its runs, and a
cross-validated query set's folds and their merged run.

    posbias train --config config.yaml --model maxp --seed 1 --tokens tokens/ --queries ... --qrels ... \
        --candidates ... --out ckpt/
    posbias finetune --config config.yaml --model maxp --seed 1 --init ckpt/ --tokens ... --queries ... --qrels ... \
        --candidates ... --rerank TOKENS QUERIES CANDIDATES RUN [--rerank ...] --out ckpt-finetuned/
    posbias cross-validate fold --config config.yaml --model maxp --seed 1 --init ckpt/ --tokens ... --queries ... \
        --qrels ... --candidates ... --folds folds.tsv --fold 1 --run fold1.run
    posbias cross-validate merge --model maxp --seed 1 --runs fold1.run fold2.run ... --folds folds.tsv --run out.run
    posbias cross-validate checkpoint --config config.yaml --model maxp --seed 1 --init ckpt/ \
        --queryset TOKENS QUERIES QRELS CANDIDATES FOLDS RUN [--queryset ...]     (every fold, resuming by fold)

Fine-tuning and the folds take the model's recipe with the config's `finetuning.training` or
`cross_validation.training` overrides, and its scoring (`rerank`), as the workflow's jobs do.
"""

from __future__ import annotations

from posbias.command_flags import (POSITIVE, SEED, add_command, add_stage, named_block,
                                   read_config_object, reads, word)
from posbias.errors import InputError


def register(commands) -> None:
    tr = add_command(commands, "train", train, help="fine-tune one configured model with one seed (re-running the "
                                                    "same command after a kill resumes from <out>.resume/)")
    tr.add_argument("--config", default="config.yaml")
    tr.add_argument("--model", required=True)
    tr.add_argument("--seed", type=SEED, required=True)
    reads(tr, "--tokens", "directory", required=True, help="token store of the collection (posbias tokenize)")
    for name in ("queries", "qrels", "candidates"):
        reads(tr, f"--{name}", required=True)
    tr.add_argument("--out", required=True)
    tr.add_argument("--threads", type=POSITIVE, default=1)

    ft = add_command(commands, "finetune", finetune,
                     help="fine-tune a trained checkpoint on the config's finetuning query set, then rerank with it "
                          "(Table 4's fine-tuned setting; the workflow's finetune job)")
    _checkpoint_job_flags(ft)
    ft.add_argument("--rerank", nargs=4, action="append", required=True,
                    metavar=("TOKENS", "QUERIES", "CANDIDATES", "RUN"),
                    help="a query set the fine-tuned checkpoint reranks, and where its run goes (repeatable)")
    ft.add_argument("--out", required=True, help="the fine-tuned checkpoint")

    cv = add_stage(commands, "cross-validate", handler=cross_validate,
                   help="a cross-validated query set: one fold reranked by the checkpoint fine-tuned on the others, "
                        "and the folds' runs merged")
    fold = cv.add_parser("fold", help="fine-tune the checkpoint on the other folds, rerank this one")
    _checkpoint_job_flags(fold)
    reads(fold, "--folds", required=True, help="the query set's folds (qid<TAB>fold; posbias fetch --folds)")
    fold.add_argument("--fold", type=POSITIVE, required=True)
    fold.add_argument("--run", required=True, help="the fold's run")
    checkpoint = cv.add_parser("checkpoint", help="every fold of each --queryset, one after another, and each query "
                                                  "set's merged run (cross_validation.jobs: per_checkpoint); "
                                                  "run again after an interruption, it goes on with the next fold")
    checkpoint.add_argument("--config", default="config.yaml")
    checkpoint.add_argument("--model", required=True, help="a trained model of --config")
    checkpoint.add_argument("--seed", type=SEED, required=True)
    reads(checkpoint, "--init", "directory", required=True, help="the model's trained checkpoint (posbias train)")
    checkpoint.add_argument("--queryset", nargs=6, action="append", required=True,
                            metavar=("TOKENS", "QUERIES", "QRELS", "CANDIDATES", "FOLDS", "RUN"),
                            help="a cross-validated query set's files and where its merged run goes (repeatable)")
    checkpoint.add_argument("--threads", type=POSITIVE, default=1)
    merge = cv.add_parser("merge", help="the folds' runs as one run of the query set")
    merge.add_argument("--model", required=True, type=word)
    merge.add_argument("--seed", type=SEED, required=True)
    reads(merge, "--runs", nargs="+", required=True, help="the fold runs, fold 1 first")
    reads(merge, "--folds", required=True)
    merge.add_argument("--run", required=True)


def _checkpoint_job_flags(parser) -> None:
    """A job that fine-tunes a trained checkpoint: the model and seed of the config, the checkpoint, and the
    query set it trains on."""
    parser.add_argument("--config", default="config.yaml")
    parser.add_argument("--model", required=True, help="a trained model of --config")
    parser.add_argument("--seed", type=SEED, required=True)
    reads(parser, "--init", "directory", required=True, help="the model's trained checkpoint (posbias train)")
    reads(parser, "--tokens", "directory", required=True, help="the training collection's token store")
    for name in ("queries", "qrels", "candidates"):
        reads(parser, f"--{name}", required=True, help=f"the training query set's {name}")
    parser.add_argument("--threads", type=POSITIVE, default=1)


def _trained_model(config, path: str, model: str) -> None:
    block = named_block(config.data, "models", model, path, "--model")
    if block.get("zero_shot"):
        raise InputError(f"--model {model}: models.{model} in {path} is zero-shot (never trained); rerank with it "
                         f"directly: posbias rerank --model {model}")


def train(args) -> None:
    from posbias.training.jobs import Recipe, TrainJob
    from posbias.training.steps import train_model

    config = read_config_object(args.config)
    _trained_model(config, args.config, args.model)
    # as the workflow's train job gets it
    recipe = Recipe(config.models.params(args.model), config.models.training_params(args.model), args.seed,
                    args.model)
    train_model(TrainJob(recipe, _training_set(args), args.out, threads=args.threads))


def _training_set(args):
    from posbias.training.jobs import TrainingSet

    return TrainingSet(args.tokens, args.queries, args.qrels, args.candidates)


def _recipe(job: dict):
    """The recipe of a job's params (`CFG.finetuning.job_params`, `CFG.cross_validation.fold_params`, ...)."""
    from posbias.training.jobs import Recipe

    return Recipe(job["model"], job["training"], job["seed"], job["name"])


def finetune(args) -> None:
    from posbias.scoring.reranking import Reranking
    from posbias.training.jobs import FinetuneJob
    from posbias.training.steps import finetune_and_rerank

    config = read_config_object(args.config)
    _trained_model(config, args.config, args.model)
    job = config.finetuning.job_params(args.model, args.seed)  # as the workflow's finetune job gets it
    tokens, queries, candidates, runs = (list(column) for column in zip(*args.rerank))
    reranking = Reranking(tokens, queries, candidates, runs, tag=job["tag"], scoring=config.rerank.scoring(args.model))
    finetune_and_rerank(FinetuneJob(_recipe(job), args.init, _training_set(args), reranking, checkpoint=args.out,
                                    threads=args.threads))


def cross_validate(args) -> None:
    from posbias.training.jobs import CheckpointFoldsJob, CrossValidatedSet, FoldJob, TrainingSet
    from posbias.training.steps import cross_validate_checkpoint, cross_validate_fold, merge_fold_runs

    if args.cross_validate_command == "merge":
        from posbias.training.config import run_tag

        merge_fold_runs(args.runs, args.folds, args.run, run_tag(args.model, args.seed))
        return
    config = read_config_object(args.config)
    _trained_model(config, args.config, args.model)
    scoring = config.rerank.scoring(args.model)
    if args.cross_validate_command == "checkpoint":
        job = config.cross_validation.checkpoint_params(args.model, args.seed)  # the cross_validate_checkpoint job's
        querysets = [CrossValidatedSet(TrainingSet(tokens, queries, qrels, candidates), folds, run)
                     for tokens, queries, qrels, candidates, folds, run in args.queryset]
        cross_validate_checkpoint(CheckpointFoldsJob(_recipe(job), args.init, querysets, tag=job["tag"],
                                                     scoring=scoring, threads=args.threads))
        return
    job = config.cross_validation.fold_params(args.model, args.seed, args.fold)  # the cross_validate_fold job's
    cross_validate_fold(FoldJob(_recipe(job), args.init, _training_set(args), folds=args.folds, fold=job["fold"],
                                run=args.run, tag=job["tag"], scoring=scoring, threads=args.threads))
