"""Snakemake entry: per-query metric values of one run."""
from posbias.logs import job_log
from posbias.steps.evaluate import evaluate_run

with job_log(snakemake.log[0]):
    evaluate_run(snakemake.input.qrels, snakemake.input.run, snakemake.params.metrics, snakemake.output.values,
                 system=snakemake.wildcards.get("system", "retriever"), seed=int(snakemake.wildcards.get("seed", 0)),
                 queryset=snakemake.wildcards.queryset)
