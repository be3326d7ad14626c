"""Snakemake entry: a bi-encoder fine-tuned on position-balanced examples, the twin an audit mitigated by
position_balanced_finetuning reads (posbias.audit.balanced_finetuning)."""
from posbias.audit.balanced_finetuning import finetune
from posbias.device import pick_device
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    job = snakemake.params.job
    finetune(job["spec"], snakemake.output[0], job["settings"], str(pick_device("auto")))
