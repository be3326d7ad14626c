"""Snakemake entry: a model table (tables.<name>, in its declared layout) as LaTeX, CSV, Markdown and HTML."""

from posbias.logs import job_log
from posbias.evaluation.report import model_table

with job_log(snakemake.log[0]):
    p = snakemake.params
    model_table(list(snakemake.input.averaged), p.spec, p.models, p.external, p.querysets, p.n_seeds, p.statistics,
                p.label, dict(snakemake.output.items()))
