"""Snakemake entry: rerank every configured query set's candidates with one checkpoint."""
from posbias.logs import job_log
from posbias.steps.training import rerank_candidates

with job_log(snakemake.log[0]):
    rerank_candidates(snakemake.input.checkpoint, tokens=list(snakemake.input.tokens),
                      queries=list(snakemake.input.queries), candidates=list(snakemake.input.candidates),
                      runs=list(snakemake.output.runs), tag=snakemake.params.tag, scoring=snakemake.params.scoring,
                      threads=snakemake.threads)
