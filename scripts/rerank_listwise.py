"""Snakemake entry: rerank one query set's candidates with a listwise ranker (RankGPT) through a language model."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.rerank.steps import rerank_listwise

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    p = snakemake.params
    rerank_listwise(p.args, p.llm, p.cache, docs=snakemake.input.docs, queries=snakemake.input.queries,
                    candidates=snakemake.input.candidates, run=snakemake.output.run, tag=p.tag, llm_name=p.llm_name)
