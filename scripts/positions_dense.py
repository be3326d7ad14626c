"""Snakemake entry: a dense-label query set's first relevant chunks, judged by a language model."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.positions.steps import dense

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    given, params = snakemake.input, snakemake.params
    dense(params.spec, params.settings, params.judge, params.judge_name, params.cache, given.docs, given.queries,
          given.qrels, snakemake.output.rows, snakemake.output.judgments, snakemake.output.summary,
          passages=given.get("passages"), passage_qrels=given.get("passage_qrels"),
          out_consistency=snakemake.output.consistency, order_judges=params.order_judges)
