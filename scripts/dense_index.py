"""Snakemake entry: build a FAISS index from a collection's vector matrix (resumes a killed HNSW or IVF build)."""
from posbias.logs import job_log
from posbias.retrieval.steps import dense_index

with job_log(snakemake.log[0]):
    dense_index(snakemake.input.vectors, snakemake.output.index, snakemake.params.faiss, snakemake.threads)
