"""Snakemake entry: fine-tune a trained checkpoint on every fold but one, rerank that fold."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.training.steps import cross_validate_fold

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    cross_validate_fold(snakemake.input.init, snakemake.params.model, snakemake.params.training,
                        snakemake.params.seed, tokens=snakemake.input.tokens, queries=snakemake.input.queries,
                        qrels=snakemake.input.qrels, candidates=snakemake.input.candidates,
                        folds=snakemake.input.folds, fold=snakemake.params.fold, run=snakemake.output.run,
                        tag=snakemake.params.tag, scoring=snakemake.params.scoring, threads=snakemake.threads,
                        name=snakemake.params.name)
