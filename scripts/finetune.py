"""Snakemake entry: fine-tune a trained checkpoint (the fine-tuned setting) and rerank the fine-tuned query sets
with it in the same job."""
from posbias.logs import job_log
from posbias.steps.training import finetune_and_rerank

with job_log(snakemake.log[0]):
    finetune_and_rerank(
        snakemake.input.init, snakemake.params.model, snakemake.params.training, snakemake.params.seed,
        train={key: snakemake.input[key] for key in ("tokens", "queries", "qrels", "candidates")},
        rerank={"tokens": list(snakemake.input.rerank_tokens), "queries": list(snakemake.input.rerank_queries),
                "candidates": list(snakemake.input.rerank_candidates), "runs": list(snakemake.output.runs)},
        out_dir=snakemake.output.checkpoint, tag=snakemake.params.tag, scoring=snakemake.params.scoring,
        threads=snakemake.threads, name=snakemake.params.name)
