"""Snakemake entry: the first-stage table (each retriever on each query set)."""
from posbias.logs import job_log
from posbias.evaluation.report import first_stage_table

with job_log(snakemake.log[0]):
    first_stage_table(list(snakemake.input.values), snakemake.params.spec, snakemake.params.querysets,
                      snakemake.params.statistics, dict(snakemake.output.items()))
