"""Snakemake entry: per-query metric values of one system's run on one query set."""
from posbias.logs import job_log
from posbias.evaluation.steps import evaluate_run

p = snakemake.params
with job_log(snakemake.log[0]):
    evaluate_run(snakemake.input.qrels, snakemake.input.run, p.evaluation["metrics"], snakemake.output.values,
                 system=p.system, seed=p.seed, queryset=p.queryset, rel_level=p.evaluation["rel_level"])
