"""Snakemake entry: a sparse-label query set's first relevant positions, by approximate passage matching."""
from posbias.logs import job_log
from posbias.positions.steps import sparse

with job_log(snakemake.log[0]):
    given = snakemake.input
    sparse(snakemake.params.spec, snakemake.params.settings, given.docs, given.queries, given.qrels, given.passages,
           given.passage_qrels, snakemake.output.rows, snakemake.output.summary,
           passage_queries=given.get("passage_queries"), index=given.get("index"),
           retriever=snakemake.params.retriever, threads=snakemake.threads)
