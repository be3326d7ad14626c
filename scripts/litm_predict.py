"""Snakemake entry: one language model answers every Lost-in-the-Middle prompt of one task."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.litm.jobs import PredictJob, Reader
from posbias.litm.steps import predict

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    p = snakemake.params
    outputs = dict(zip(p.prediction_keys, snakemake.output, strict=True))
    predict(PredictJob(p.task, p.section, Reader(snakemake.wildcards.model, p.llm, p.cache, p.decoding), p.data,
                       outputs, threads=snakemake.threads))
