"""Snakemake entry: build FarRelevant documents from a passage collection."""
from pathlib import Path

from posbias.farrelevant.jobs import FarRelevantJob
from posbias.farrelevant.steps import build_farrelevant
from posbias.logs import job_log

with job_log(snakemake.log[0]):
    i, p = snakemake.input, snakemake.params
    build_farrelevant(FarRelevantJob(i.passages, i.queries, i.qrels, p.settings, p.tokenizer,
                                     str(Path(snakemake.output.docs).parent), p.queryset, p.train_queryset,
                                     i.negatives))
