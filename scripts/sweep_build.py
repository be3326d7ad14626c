"""Snakemake entry: the position sweep's collection (documents, queries, qrels, positions, candidates)."""
from posbias.logs import job_log
from posbias.sweep.steps import build_sweep

with job_log(snakemake.log[0]):
    i = snakemake.input
    build_sweep({k: i[k] for k in ("queries", "qrels", "docs", "positions", "candidates")}, i.passages,
                i.passage_qrels, snakemake.params.settings, snakemake.params.tokenizer, snakemake.params.queryset,
                snakemake.params.depth, dict(snakemake.output.items()))
