"""Snakemake entry: rerank one query set's candidates with a zero-shot model, straight from its pretrained weights."""
from posbias.logs import job_log
from posbias.steps.training import rerank_pretrained

with job_log(snakemake.log[0]):
    rerank_pretrained(snakemake.params.model, tokens=snakemake.input.tokens, queries=snakemake.input.queries,
                      candidates=snakemake.input.candidates, run=snakemake.output.run, tag=snakemake.params.tag,
                      scoring=snakemake.params.scoring, threads=snakemake.threads)
