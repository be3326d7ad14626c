"""Snakemake entry: the position sweep's table (LaTeX, CSV, Markdown, HTML) and figure (PNG, PDF)."""
from posbias.logs import job_log
from posbias.sweep.steps import sweep_report

with job_log(snakemake.log[0]):
    o, p = snakemake.output, snakemake.params
    sweep_report(snakemake.input.per_seed, snakemake.input.positions, snakemake.input.candidates, p.models, p.metric,
                 p.statistics, p.alpha, p.first_window, p.n_seeds, p.zero_shot,
                 {k: o[k] for k in ("tex", "csv", "md", "html")},
                 [o.png, o.pdf], p.note, {k: o[f"sensitivity_{k}"] for k in ("tex", "csv", "md", "html")})
