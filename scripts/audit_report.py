"""Snakemake entry: the audit's cards (one per model) and its leaderboard, from the battery files."""
from pathlib import Path

from posbias.audit.steps import write_reports
from posbias.logs import job_log

with job_log(snakemake.log[0]):
    write_reports(Path(snakemake.output.cards[0]).parent.parent, snakemake.params.jobs)
