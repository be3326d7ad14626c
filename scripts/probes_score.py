"""Snakemake entry: one scorer's scores of every probe pair and of the heatmap's queries."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.probes.steps import score

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    pairs = dict(zip(snakemake.params.probes, snakemake.input.pairs, strict=True))
    score(snakemake.params.scorer, snakemake.input.get("checkpoint"), pairs, snakemake.input.heatmap,
          snakemake.output.scores, snakemake.output.heatmap, snakemake.threads)
