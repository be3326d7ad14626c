"""Snakemake entry: the random-shuffle baseline run of each query set."""
from posbias.logs import job_log
from posbias.steps.retrieval import random_shuffle

with job_log(snakemake.log[0]):
    for candidates, run in zip(snakemake.input.candidates, snakemake.output.runs):
        random_shuffle(candidates, run, snakemake.params.seed)
