"""Snakemake entry: encode a collection into a memory-mapped vector matrix (resumes a killed run)."""
from posbias.logs import job_log
from posbias.steps.retrieval import dense_encode

with job_log(snakemake.log[0]):
    dense_encode(snakemake.input.docs, snakemake.output.vectors, snakemake.params.encoder, snakemake.threads)
