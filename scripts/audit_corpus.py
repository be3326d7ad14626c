"""Snakemake entry: the audit's real corpus (NQ-open with Wikipedia passages) as the batteries' source files."""
from pathlib import Path

from posbias.audit.corpus import build_corpus
from posbias.logs import job_log

with job_log(snakemake.log[0]):
    build_corpus(Path(snakemake.output.queries).parent)
