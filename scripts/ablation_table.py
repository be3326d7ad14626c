"""Snakemake entry: an ablation table (Table 6: variants of one model against one of them)."""
from posbias.logs import job_log
from posbias.steps.report import ablation_table

with job_log(snakemake.log[0]):
    p = snakemake.params
    ablation_table(list(snakemake.input.averaged), p.spec, p.models, p.querysets, p.n_seeds, p.statistics, p.label,
                   dict(snakemake.output.items()))
