"""Snakemake entry: the efficiency figure (the study's Figure 3), PNG and PDF."""
from posbias.logs import job_log
from posbias.evaluation.report import efficiency_figure

with job_log(snakemake.log[0]):
    efficiency_figure(snakemake.input.table, list(snakemake.input.infos), snakemake.params.runs,
                      snakemake.params.models, [snakemake.output.png, snakemake.output.pdf])
