"""Snakemake entry: one language model answers every Lost-in-the-Middle prompt of one task."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.litm.steps import predict

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    p = snakemake.params
    outputs = dict(zip(p.prediction_keys, snakemake.output, strict=True))
    predict(p.task, p.section, p.llm, p.cache, p.decoding, p.data, outputs, model_name=snakemake.wildcards.model,
            seed=p.section.get("seed", 0), threads=snakemake.threads)
