"""Snakemake entry: RAG poisoning, readers answering the poison probe's questions, judged by a language model."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.probes.jobs import RagInputs, RagJob, RagOutputs
from posbias.probes.steps import rag

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    params, given, out = snakemake.params, snakemake.input, snakemake.output
    rag(RagJob(params.settings, RagInputs(given.poison, given.foil, given.replacements[0]),
               RagOutputs(out.answers, params.tables, out.judge_pairs, out.judge_summary), params.readers,
               params.labels, params.judge, params.cache, params.correction, params.alpha, params.judge_label))
