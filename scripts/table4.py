"""Snakemake entry: Table 4 (FarRelevant, zero-shot and fine-tuned) as LaTeX, CSV, Markdown and HTML."""
from posbias.logs import job_log
from posbias.evaluation.report import table4

with job_log(snakemake.log[0]):
    p = snakemake.params
    table4(list(snakemake.input.averaged), list(snakemake.input.finetuned), p.spec, p.models, p.external,
           p.querysets, p.n_seeds, p.statistics, dict(snakemake.output.items()))
