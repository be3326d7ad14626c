"""Snakemake entry: encode a collection and store its FAISS index."""
from posbias.logs import job_log
from posbias.steps.retrieval import dense_index

with job_log(snakemake.log[0]):
    dense_index(snakemake.input.docs, snakemake.output.index, snakemake.params.encoder, snakemake.params.faiss,
                snakemake.threads)
