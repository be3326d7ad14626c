"""Snakemake entry: stack per-seed values and average them over seeds."""
from posbias.logs import job_log
from posbias.evaluation.steps import combine_seeds

with job_log(snakemake.log[0]):
    combine_seeds(list(snakemake.input.values), snakemake.output.per_seed, snakemake.output.averaged)
