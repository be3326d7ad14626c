"""Snakemake entry: a baseline-centred table (Tables 1, 7, 8) as LaTeX, CSV, Markdown and HTML."""
from posbias.logs import job_log
from posbias.steps.report import baseline_table

with job_log(snakemake.log[0]):
    p = snakemake.params
    baseline_table(list(snakemake.input.averaged), p.spec, p.models, p.external, p.querysets, p.n_seeds,
                   p.statistics, p.label, dict(snakemake.output.items()))
