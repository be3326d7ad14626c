"""Snakemake entry: a dense-label query set's first relevant chunks, judged by a language model."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.positions.jobs import DenseJob, Judge, QuerySetFiles, SetOutputs
from posbias.positions.steps import dense

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    given, params, out = snakemake.input, snakemake.params, snakemake.output
    dense(DenseJob(params.spec, params.settings, Judge(params.judge, params.judge_name, params.cache),
                   QuerySetFiles(given.docs, given.queries, given.qrels),
                   SetOutputs(out.rows, out.summary, out.judgments, out.consistency),
                   passages=given.get("passages"), passage_qrels=given.get("passage_qrels"),
                   order_judges=params.order_judges or {}))
