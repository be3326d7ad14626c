"""Snakemake entry: NQ-shaped retrieval records about the embedded world, for Lost in the Middle's QA."""
from posbias.logs import job_log
from posbias.litm.steps import build_synthetic_qa

with job_log(snakemake.log[0]):
    build_synthetic_qa(snakemake.params.generator, snakemake.params.n_questions, snakemake.output[0])
