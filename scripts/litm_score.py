"""Snakemake entry: score every Lost-in-the-Middle prediction file of one task (the authors' metrics)."""
from posbias.logs import job_log
from posbias.steps.litm import score

with job_log(snakemake.log[0]):
    score(snakemake.params.task, dict(zip(snakemake.params.prediction_keys, snakemake.input, strict=True)), snakemake.output[0])
