"""Snakemake entry: hybrid candidates (dense k-NN re-scored by BM25 + cosine fusion) for a query set."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.retrieval.jobs import HybridJob, HybridRetriever
from posbias.retrieval.steps import hybrid_retrieve

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    p = snakemake.params
    retriever = HybridRetriever(p.tag, p.encoder, p.weight, p.bm25["k1"], p.bm25["b"])
    hybrid_retrieve(HybridJob(retriever, snakemake.input.dense, snakemake.input.lucene, snakemake.input.queries,
                              snakemake.output.run, p.depth), snakemake.threads)
