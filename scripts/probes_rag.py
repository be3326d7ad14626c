"""Snakemake entry: RAG poisoning, readers answering the poison probe's questions, judged by a language model."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.probes.steps import rag

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    params = snakemake.params
    rag(params.settings, snakemake.input.poison, snakemake.input.foil, snakemake.input.replacements[0],
        params.readers, params.judge, params.cache, snakemake.output.answers, params.tables, params.labels,
        params.correction, params.alpha, snakemake.output.judge_pairs, snakemake.output.judge_summary,
        params.judge_label)
