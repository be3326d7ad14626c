"""Snakemake entry: rerank one query set's candidates with one checkpoint."""
from posbias.logs import job_log
from posbias.steps.training import rerank_candidates

with job_log(snakemake.log[0]):
    rerank_candidates(snakemake.input.checkpoint, tokens=[snakemake.input.tokens],
                      queries=[snakemake.input.queries], candidates=[snakemake.input.candidates],
                      runs=[snakemake.output.run], tag=snakemake.params.tag, scoring=snakemake.params.scoring,
                      threads=snakemake.threads)
