"""Snakemake entry: the de-biased copy of a collection that de-biased models train on."""
from posbias.logs import job_log
from posbias.data.steps import debias_collection

with job_log(snakemake.log[0]):
    debias_collection(snakemake.input.docs, snakemake.output.docs, snakemake.params.n_splits, snakemake.params.seed)
