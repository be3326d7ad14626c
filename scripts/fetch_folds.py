"""Snakemake entry: write a query set's cross-validation folds."""
from posbias.logs import job_log
from posbias.data.steps import fetch_folds

with job_log(snakemake.log[0]):
    fetch_folds(snakemake.params.folds, snakemake.output.folds)
