"""Snakemake entry: a trained FirstP checkpoint saved as a Hugging Face sequence-classification model."""
from posbias.audit.export import export_checkpoint
from posbias.logs import job_log

with job_log(snakemake.log[0]):
    export_checkpoint(snakemake.input.checkpoint, snakemake.output[0])
