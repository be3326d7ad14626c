"""Snakemake entry: tokenise a collection once into a token store the rankers read by document id."""
from posbias.logs import job_log
from posbias.data.steps import tokenize_documents

with job_log(snakemake.log[0]):
    tokenize_documents(snakemake.input.docs, snakemake.output.store, snakemake.params.tokenizer,
                       snakemake.params.cap, snakemake.params.trust_remote_code, snakemake.threads)
