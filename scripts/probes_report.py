"""Snakemake entry: the probes' paired tests, corrected together, as a table and figures."""
from posbias.logs import job_log
from posbias.probes.steps import report

with job_log(snakemake.log[0]):
    params = snakemake.params
    report(dict(zip(params.scorers, snakemake.input.scores, strict=True)),
           dict(zip(params.scorers, snakemake.input.heatmaps, strict=True)), snakemake.input.query_table,
           params.labels, params.correction, params.alpha, params.heatmap, params.tables, params.figures,
           params.sensitivity)
