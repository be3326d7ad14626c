"""Snakemake entry: a de-biasing table (Tables 2, 3) as LaTeX, CSV, Markdown and HTML."""
from posbias.logs import job_log
from posbias.steps.report import debias_table

with job_log(snakemake.log[0]):
    p = snakemake.params
    debias_table(list(snakemake.input.averaged), p.spec, p.models, p.querysets, p.n_seeds, p.statistics, p.label,
                 dict(snakemake.output.items()))
