"""Snakemake entry: fine-tune one model with one seed (resuming a killed run's saved state), from the
pretrained backbone or, for the fine-tuned setting, from a trained checkpoint (`input.init`)."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.training.steps import train_model

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    train_model(snakemake.params.model, snakemake.params.training, snakemake.params.seed,
                tokens=snakemake.input.tokens, queries=snakemake.input.queries, qrels=snakemake.input.qrels,
                candidates=snakemake.input.candidates, out_dir=snakemake.output.checkpoint,
                threads=snakemake.threads, name=snakemake.params.name,
                init_checkpoint=snakemake.input.get("init"))
