"""Snakemake entry: build FarRelevant documents from a passage collection."""
from pathlib import Path

from posbias.logs import job_log
from posbias.farrelevant.steps import build_farrelevant

with job_log(snakemake.log[0]):
    build_farrelevant(snakemake.input.passages, snakemake.input.queries, snakemake.input.qrels,
                      snakemake.params.settings, snakemake.params.tokenizer,
                      out_dir=str(Path(snakemake.output.docs).parent), queryset=snakemake.params.queryset,
                      train_queryset=snakemake.params.train_queryset, negatives=snakemake.input.negatives)
