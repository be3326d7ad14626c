"""Snakemake entry: rerank every configured query set's candidates with one checkpoint."""
from posbias.logs import job_log
from posbias.steps.training import rerank_candidates

with job_log(snakemake.log[0]):
    rerank_candidates(snakemake.input.checkpoint, list(snakemake.input.docs), list(snakemake.input.queries),
                      list(snakemake.input.candidates), list(snakemake.output.runs), snakemake.params.tag,
                      snakemake.params.batch_size, snakemake.params.device, snakemake.threads)
