"""Snakemake entry: fine-tune a trained checkpoint (the fine-tuned setting) and rerank the fine-tuned query sets
with it in the same job."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.training.steps import finetune_and_rerank, finetune_job

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    finetune_and_rerank(finetune_job(snakemake.input.init, snakemake.input, snakemake.output, snakemake.params,
                                     scoring=snakemake.params.scoring, threads=snakemake.threads))
