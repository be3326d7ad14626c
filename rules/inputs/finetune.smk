# The names, paths and input functions of rules/finetune.smk (Snakemake's lint keeps functions out of a file
# with rules).

def finetuned_run(queryset, suffix=""):
    """A fine-tuned checkpoint's run on a query set, as a pattern in the fine-tuning job's {model} and {seed}."""
    return run_of(queryset, "{model}", "{seed}", stage="runs-finetuned") + suffix


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
        "checkpoint": directory("results/models-finetuned/{model}/seed{seed}"),
        "runs": [finetuned_run(qs) for qs in FINETUNED_QUERYSETS],
        "infos": [finetuned_run(qs, ".json") for qs in FINETUNED_QUERYSETS],
    }
    return {prefix + key: value for key, value in outputs.items()}


def finetuning_params(prefix=""):
    """What the fine-tuning job receives besides files (rules finetune and rerank_checkpoint)."""
    params = dict(
        model=lambda wc: CFG.models.params(wc.model),
        training=lambda wc: CFG.models.training_params(wc.model, FINETUNING.get("training")),
        seed=lambda wc: int(wc.seed),
        name=lambda wc: f"{wc.model}-finetuned",
        tag=lambda wc: f"{wc.model}-finetuned-seed{wc.seed}",
    )
    return {prefix + key: value for key, value in params.items()}
