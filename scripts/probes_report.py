"""Snakemake entry: the probes' paired tests, corrected together, as a table and figures."""
from posbias.logs import job_log
from posbias.probes.jobs import ReportJob
from posbias.probes.steps import report

with job_log(snakemake.log[0]):
    params, given = snakemake.params, snakemake.input
    report(ReportJob(dict(zip(params.scorers, given.scores, strict=True)),
                     dict(zip(params.scorers, given.heatmaps, strict=True)), given.query_table, params.labels,
                     params.correction, params.alpha, params.heatmap, params.tables, params.figures,
                     params.sensitivity))
