"""Snakemake entry: a query set's metric per model by answer position (LaTeX, CSV, Markdown, HTML)."""
from posbias.logs import job_log
from posbias.sweep.jobs import BreakdownJob, ShownModels
from posbias.sweep.steps import breakdown_report

with job_log(snakemake.log[0]):
    p = snakemake.params
    breakdown_report(BreakdownJob(snakemake.input.averaged, snakemake.input.positions, p.spec,
                                  ShownModels(p.models, p.n_seeds, p.zero_shot), p.retriever_label, p.correction,
                                  p.alpha, dict(snakemake.output.items())))
