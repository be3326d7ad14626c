"""Snakemake entry: Table 11 (parameters per ranker, from the checkpoints) as LaTeX, CSV, Markdown and HTML."""
from posbias.logs import job_log
from posbias.evaluation.report import parameter_table

with job_log(snakemake.log[0]):
    parameter_table(dict(zip(snakemake.params.trained, snakemake.input.checkpoints)), snakemake.params.labels,
                    dict(snakemake.output.items()), zero_shot=snakemake.params.zero_shot)
