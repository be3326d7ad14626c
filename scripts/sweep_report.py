"""Snakemake entry: the position sweep's table (LaTeX, CSV, Markdown, HTML) and figure (PNG, PDF)."""
from posbias.logs import job_log
from posbias.sweep.jobs import ShownModels, SweepReportJob
from posbias.sweep.steps import sweep_report

with job_log(snakemake.log[0]):
    o, p, given = snakemake.output, snakemake.params, snakemake.input
    sweep_report(SweepReportJob(given.per_seed, given.positions, given.candidates,
                                ShownModels(p.models, p.n_seeds, p.zero_shot), p.metric, p.statistics, p.alpha,
                                p.first_window, {k: o[k] for k in ("tex", "csv", "md", "html")}, [o.png, o.pdf],
                                p.note, {k: o[f"sensitivity_{k}"] for k in ("tex", "csv", "md", "html")}))
