"""Snakemake entry: write a query set's queries and qrels from its source."""
from posbias.logs import job_log
from posbias.data.steps import fetch_queryset

with job_log(snakemake.log[0]):
    fetch_queryset(snakemake.params.source, snakemake.output.queries, snakemake.output.qrels)
