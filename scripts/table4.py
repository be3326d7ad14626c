"""Snakemake entry: Table 4 (FarRelevant, zero-shot and fine-tuned) as LaTeX, CSV, Markdown and HTML."""
from posbias.evaluation.jobs import TableJob
from posbias.evaluation.report import TABLE4_LABEL, table4
from posbias.logs import job_log

with job_log(snakemake.log[0]):
    outputs = dict(snakemake.output.items())
    table4(TableJob.from_params(snakemake.input.averaged, snakemake.params, TABLE4_LABEL, outputs,
                                snakemake.input.finetuned))
