"""Snakemake entry: queries, average tokens per query and positive judgments of a query set."""
from posbias.logs import job_log
from posbias.evaluation.steps import queryset_statistics

with job_log(snakemake.log[0]):
    queryset_statistics(snakemake.input.queries, snakemake.input.qrels, snakemake.params.tokenizer,
                        snakemake.params.rel_level, snakemake.output.stats)
