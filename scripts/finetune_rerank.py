"""Snakemake entry: fine-tune a trained checkpoint on one query set, rerank others with it."""
from posbias.logs import job_log
from posbias.steps.training import finetune_and_rerank

with job_log(snakemake.log[0]):
    finetune_and_rerank(snakemake.input.init, snakemake.params.model, snakemake.params.training,
                        snakemake.params.seed, train_tokens=snakemake.input.train_tokens,
                        train_queries=snakemake.input.train_queries, train_qrels=snakemake.input.train_qrels,
                        train_candidates=snakemake.input.train_candidates, tokens=list(snakemake.input.tokens),
                        queries=list(snakemake.input.queries), candidates=list(snakemake.input.candidates),
                        runs=list(snakemake.output.runs), tag=snakemake.params.tag,
                        scoring=snakemake.params.scoring, threads=snakemake.threads, name=snakemake.params.name)
