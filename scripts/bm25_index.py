"""Snakemake entry: build a Lucene index."""
from posbias.logs import job_log
from posbias.steps.retrieval import index

with job_log(snakemake.log[0]):
    index(snakemake.input.docs, snakemake.output.index, snakemake.threads)
