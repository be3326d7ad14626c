"""Snakemake entry: render table1 (LaTeX, CSV, Markdown)."""
from posbias.logs import job_log
from posbias.steps.report import table1

with job_log(snakemake.log[0]):
    table1(list(snakemake.input.averaged), snakemake.params.spec, snakemake.params.models,
         snakemake.params.querysets, snakemake.params.n_seeds,
         snakemake.output.tex, snakemake.output.csv, snakemake.output.md)
