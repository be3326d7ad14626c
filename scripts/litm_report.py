"""Snakemake entry: Lost in the Middle's tables and figures of accuracy by gold position, and the curves'
position sensitivity."""
from posbias.logs import job_log
from posbias.litm.steps import report

with job_log(snakemake.log[0]):
    report(list(snakemake.input), snakemake.params.labels, snakemake.params.tables, snakemake.params.figures,
           snakemake.params.correction, snakemake.params.sensitivity)
