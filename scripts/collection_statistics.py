"""Snakemake entry: number of documents and average tokens per document of a collection."""
from posbias.logs import job_log
from posbias.evaluation.steps import collection_statistics

with job_log(snakemake.log[0]):
    collection_statistics(snakemake.input.get("docs"), snakemake.input.get("tokens"), snakemake.params.tokenizer,
                          snakemake.params.sample, snakemake.output.stats)
