"""Snakemake entry: hybrid candidates (dense k-NN re-scored by BM25 + cosine fusion) for a query set."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.retrieval.steps import hybrid_retrieve

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    hybrid_retrieve(snakemake.input.dense, snakemake.input.lucene, snakemake.input.queries, snakemake.output.run,
                    snakemake.params.depth, snakemake.params.encoder, snakemake.params.weight,
                    snakemake.params.bm25, snakemake.params.tag, snakemake.threads)
