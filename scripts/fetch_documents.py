"""Snakemake entry: write a collection's documents from its source."""
from posbias.logs import job_log
from posbias.data.steps import fetch_documents

with job_log(snakemake.log[0]):
    fetch_documents(snakemake.params.source, snakemake.output.docs)
