"""Snakemake entry: fine-tune a trained checkpoint on every fold but one, rerank that fold."""
from posbias.logs import job_log
from posbias.steps.cross_validation import cross_validate_fold

with job_log(snakemake.log[0]):
    cross_validate_fold(snakemake.input.init, snakemake.params.model, snakemake.params.training,
                        snakemake.params.seed, snakemake.input.docs, snakemake.input.queries, snakemake.input.qrels,
                        snakemake.input.candidates, snakemake.input.folds, snakemake.params.fold,
                        snakemake.output.run, snakemake.params.tag, snakemake.params.batch_size,
                        snakemake.params.device, snakemake.threads)
