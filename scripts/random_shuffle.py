"""Snakemake entry: the random-shuffle baseline run of one query set."""
from posbias.logs import job_log
from posbias.retrieval.steps import random_shuffle

with job_log(snakemake.log[0]):
    random_shuffle(snakemake.input.candidates, snakemake.output.run, snakemake.params.seed)
