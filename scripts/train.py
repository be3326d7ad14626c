"""Snakemake entry: fine-tune one model with one seed (resuming a killed run's saved state), from the
pretrained backbone or, for the fine-tuned setting, from a trained checkpoint (`input.init`)."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.training.jobs import Recipe, TrainingSet, TrainJob
from posbias.training.steps import train_model

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    params, inputs = snakemake.params, snakemake.input
    train_model(TrainJob(Recipe(params.model, params.training, params.seed, params.name),
                         TrainingSet(inputs.tokens, inputs.queries, inputs.qrels, inputs.candidates),
                         checkpoint=snakemake.output.checkpoint, init_checkpoint=inputs.get("init"),
                         threads=snakemake.threads))
