"""Snakemake entry: a user's precomputed run as a query set's candidates."""
from posbias.logs import job_log
from posbias.retrieval.steps import import_run

with job_log(snakemake.log[0]):
    import_run(snakemake.input.run, snakemake.input.queries, snakemake.output.run, snakemake.params.depth)
