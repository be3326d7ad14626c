"""Snakemake entry: FarRelevant from MS MARCO passages (ir_datasets) or imported from local files."""
from pathlib import Path

from posbias.logs import job_log
from posbias.farrelevant.steps import build_farrelevant_source

with job_log(snakemake.log[0]):
    build_farrelevant_source(snakemake.params.source, snakemake.params.settings, snakemake.params.tokenizer,
                             out_dir=str(Path(snakemake.output.docs).parent), queryset=snakemake.params.queryset,
                             train_queryset=snakemake.params.train_queryset)
