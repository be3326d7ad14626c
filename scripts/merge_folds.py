"""Snakemake entry: merge the fold runs of a cross-validated query set into one run."""
from posbias.logs import job_log
from posbias.training.steps import merge_fold_runs

with job_log(snakemake.log[0]):
    merge_fold_runs(list(snakemake.input.runs), snakemake.input.folds, snakemake.output.run, snakemake.params.tag)
