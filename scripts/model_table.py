"""Snakemake entry: a model table (tables.<name>, in its declared layout) as LaTeX, CSV, Markdown and HTML."""

from posbias.evaluation.jobs import TableJob
from posbias.evaluation.report import model_table
from posbias.logs import job_log

with job_log(snakemake.log[0]):
    p = snakemake.params
    model_table(TableJob.from_params(snakemake.input.averaged, p, p.label, dict(snakemake.output.items())))
