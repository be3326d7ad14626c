"""Snakemake entry: Lin et al.'s outcome breakdown of every model against its baseline."""
from posbias.logs import job_log
from posbias.evaluation.report import outcome_table

with job_log(snakemake.log[0]):
    p = snakemake.params
    outcome_table(list(snakemake.input.per_seed), list(snakemake.input.qrels), p.querysets, p.rel_levels,
                  p.alphas, p.spec, p.models, dict(snakemake.output.items()))
