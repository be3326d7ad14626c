"""Snakemake entry: BM25 top-k candidates for a query set."""
from posbias.logs import job_log
from posbias.retrieval.steps import retrieve

with job_log(snakemake.log[0]):
    retrieve(snakemake.input.index, snakemake.input.queries, snakemake.output.run,
             snakemake.params.depth, snakemake.params.k1, snakemake.params.b, snakemake.threads,
             tag=snakemake.params.tag)
