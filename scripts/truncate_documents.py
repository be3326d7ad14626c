"""Snakemake entry: cut each document to its first N tokens for the rankers."""
from posbias.logs import job_log
from posbias.data.steps import truncate_documents

with job_log(snakemake.log[0]):
    truncate_documents(snakemake.input.docs, snakemake.output.docs, snakemake.params.tokenizer,
                       snakemake.params.max_tokens)
