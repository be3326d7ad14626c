"""Snakemake entry: rerank one query set's candidates (rule rerank_zero_shot), or every reranked query set's (rule
rerank_zero_shot_model), with a zero-shot model straight from its pretrained weights."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.rerank.steps import rerank_pretrained

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    one = "run" in snakemake.output.keys()
    rerank_pretrained(snakemake.params.model, tokens=snakemake.input.tokens, queries=snakemake.input.queries,
                      candidates=snakemake.input.candidates,
                      runs=[snakemake.output.run] if one else list(snakemake.output.runs), tag=snakemake.params.tag,
                      scoring=snakemake.params.scoring, threads=snakemake.threads)
