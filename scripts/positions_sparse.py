"""Snakemake entry: a sparse-label query set's first relevant positions, by approximate passage matching."""
from posbias.logs import job_log
from posbias.positions.jobs import QuerySetFiles, SetOutputs, SparseJob
from posbias.positions.steps import sparse

with job_log(snakemake.log[0]):
    given, params = snakemake.input, snakemake.params
    sparse(SparseJob(params.spec, params.settings, QuerySetFiles(given.docs, given.queries, given.qrels),
                     given.passages, given.passage_qrels, SetOutputs(snakemake.output.rows, snakemake.output.summary),
                     passage_queries=given.get("passage_queries"), index=given.get("index"),
                     retriever=params.retriever, threads=snakemake.threads))
