"""Snakemake entry: rerank one query set's candidates with a listwise ranker (RankGPT) through a language model."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.rerank.jobs import ListwiseJob
from posbias.rerank.steps import rerank_listwise

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    p, i = snakemake.params, snakemake.input
    rerank_listwise(ListwiseJob(p.args, p.llm, p.llm_name, p.cache, i.docs, i.queries, i.candidates,
                                snakemake.output.run, p.tag))
