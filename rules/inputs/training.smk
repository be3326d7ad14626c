# The names, paths and input functions of rules/training.smk (Snakemake's lint keeps functions out of a file
# with rules).

# --- finetune

def finetuned_run(queryset, suffix=""):
    """A fine-tuned checkpoint's run on a query set, as a pattern in the fine-tuning job's {model} and {seed}."""
    return run_of(queryset, "{model}", "{seed}", rerank_paths.FINETUNED_RUNS) + suffix


def finetuning_inputs(prefix=""):
    """The fine-tuning job's inputs (rules finetune and rerank_checkpoint): the `finetuning.queryset` judgments
    it trains on, and what it reranks (`finetuning.querysets`). Keys take `prefix` where a job has inputs of
    its own under the same names."""
    inputs = dict(
        tokens=lambda wc: tokens_of(collection_of(FINETUNING["queryset"]), wc.model),
        queries=queries_of(FINETUNING["queryset"]),
        qrels=qrels_of(FINETUNING["queryset"]),
        candidates=candidates_of(FINETUNING["queryset"]),
        rerank_tokens=lambda wc: [tokens_of(collection_of(qs), wc.model) for qs in FINETUNED_QUERYSETS],
        rerank_queries=[queries_of(qs) for qs in FINETUNED_QUERYSETS],
        rerank_candidates=[candidates_of(qs) for qs in FINETUNED_QUERYSETS],
    )
    return {prefix + key: value for key, value in inputs.items()}


def finetuning_outputs(prefix=""):
    """The fine-tuned checkpoint and its runs (rules finetune and rerank_checkpoint)."""
    outputs = {  # a dict literal: `checkpoint` is a Snakemake keyword at the start of a line
        "checkpoint": directory(training_paths.finetuned_checkpoint("{model}", "{seed}")),
        "runs": [finetuned_run(qs) for qs in FINETUNED_QUERYSETS],
        "infos": [finetuned_run(qs, ".json") for qs in FINETUNED_QUERYSETS],
    }
    return {prefix + key: value for key, value in outputs.items()}


def finetuning_params(prefix=""):
    """What the fine-tuning job receives besides files (rules finetune and rerank_checkpoint), one param each
    (`CFG.finetuning.job_params`, which `posbias finetune` also calls)."""
    keys = ("model", "training", "seed", "name", "tag")
    return {prefix + key: (lambda wc, key=key: CFG.finetuning.job_params(wc.model, wc.seed)[key]) for key in keys}


# --- cross validation

def folds_of(queryset):
    return data_paths.folds(collection_of(queryset), queryset)


from posbias.training.config import run_tag


def fold_params():
    """What a fold's job receives besides files, one param each (`CFG.cross_validation.fold_params`, which
    `posbias cross-validate fold` also calls)."""
    return one_param_each(lambda wc: CFG.cross_validation.fold_params(wc.model, wc.seed, wc.fold),
                          ("model", "training", "seed", "fold", "name", "tag"))


def checkpoint_params():
    """What a checkpoint's job for all its folds receives besides files, one param each
    (`CFG.cross_validation.checkpoint_params`, which `posbias cross-validate checkpoint` also calls)."""
    return one_param_each(lambda wc: CFG.cross_validation.checkpoint_params(wc.model, wc.seed),
                          ("model", "training", "seed", "name", "tag"))


def one_param_each(params_of, keys):
    """Params given as one dict per job, as one Snakemake param per key."""
    return {key: (lambda wc, key=key: params_of(wc)[key]) for key in keys}
