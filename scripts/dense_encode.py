"""Snakemake entry: encode a collection into a memory-mapped vector matrix (resumes a killed run)."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.retrieval.steps import dense_encode

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    dense_encode(snakemake.input.docs, snakemake.output.vectors, snakemake.params.encoder, snakemake.threads)
