"""Snakemake entry: rerank query sets' candidates with one checkpoint (rules rerank and rerank_checkpoint:
aligned lists of token stores, queries, candidates and runs, one entry per query set)."""
from posbias.logs import job_log
from posbias.steps.training import rerank_candidates

with job_log(snakemake.log[0]):
    rerank_candidates(snakemake.input.checkpoint, tokens=list(snakemake.input.tokens),
                      queries=list(snakemake.input.queries), candidates=list(snakemake.input.candidates),
                      runs=list(snakemake.output.runs), tag=snakemake.params.tag, scoring=snakemake.params.scoring,
                      threads=snakemake.threads)
