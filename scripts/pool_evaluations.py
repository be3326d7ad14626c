"""Snakemake entry: a pooled query set's per-query values of one system, stacked from its members'."""
from posbias.logs import job_log
from posbias.evaluation.steps import pool_values

p = snakemake.params
with job_log(snakemake.log[0]):
    pool_values(list(snakemake.input.values), p.members, p.metrics, p.queryset, snakemake.output.values)
