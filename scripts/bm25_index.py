"""Snakemake entry: build a Lucene index (with doc2query expansions when the collection has them)."""
from posbias.logs import job_log
from posbias.retrieval.steps import index

with job_log(snakemake.log[0]):
    index(snakemake.input.docs, snakemake.output.index, snakemake.threads, snakemake.params.expansions,
          snakemake.params.expansions_sha256)
