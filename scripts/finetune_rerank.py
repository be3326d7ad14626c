"""Snakemake entry: fine-tune a trained checkpoint on one query set, rerank others with it."""
from posbias.logs import job_log
from posbias.steps.training import finetune_and_rerank

with job_log(snakemake.log[0]):
    finetune_and_rerank(snakemake.input.init, snakemake.params.model, snakemake.params.training,
                        snakemake.params.seed, snakemake.input.train_docs, snakemake.input.train_queries,
                        snakemake.input.train_qrels, snakemake.input.train_candidates,
                        list(snakemake.input.docs), list(snakemake.input.queries), list(snakemake.input.candidates),
                        list(snakemake.output.runs), snakemake.params.tag, snakemake.params.batch_size,
                        snakemake.params.device, snakemake.threads)
