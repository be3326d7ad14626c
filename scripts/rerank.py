"""Snakemake entry: rerank a query set's candidates with a checkpoint."""
from posbias.logs import job_log
from posbias.steps.training import rerank_candidates

with job_log(snakemake.log[0]):
    rerank_candidates(snakemake.input.checkpoint, snakemake.input.docs, snakemake.input.queries,
                      snakemake.input.candidates, snakemake.output.run, snakemake.params.tag,
                      snakemake.params.batch_size, snakemake.params.device, snakemake.threads)
