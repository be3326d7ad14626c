"""Snakemake entry: per-query metric values of one system's runs on each query set."""
from posbias.logs import job_log
from posbias.steps.evaluate import evaluate_run

system = snakemake.params.get("system") or snakemake.wildcards.get("system", "retriever")
seed = int(snakemake.wildcards.get("seed", 0))
with job_log(snakemake.log[0]):
    for qrels, run, out, metrics, queryset, rel_level in zip(
            snakemake.input.qrels, snakemake.input.runs, snakemake.output.values, snakemake.params.metrics,
            snakemake.params.querysets, snakemake.params.rel_levels, strict=True):
        evaluate_run(qrels, run, metrics, out, system=system, seed=seed, queryset=queryset, rel_level=rel_level)
