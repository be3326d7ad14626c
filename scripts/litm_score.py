"""Snakemake entry: score every Lost-in-the-Middle prediction file of one task (the authors' metrics)."""
from posbias.logs import job_log
from posbias.litm.steps import score

with job_log(snakemake.log[0]):
    predictions = dict(zip(snakemake.params.prediction_keys, snakemake.input, strict=True))
    score(snakemake.params.task, predictions, snakemake.output[0])
