"""Snakemake entry: fine-tune one model with one seed."""
from posbias.logs import job_log
from posbias.steps.training import train_model

with job_log(snakemake.log[0]):
    train_model(snakemake.params.model, snakemake.params.training, snakemake.params.seed,
                snakemake.input.docs, snakemake.input.queries, snakemake.input.qrels,
                snakemake.input.candidates, snakemake.output.checkpoint, snakemake.threads)
