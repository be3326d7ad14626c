"""Snakemake entry: the Judging-the-Judges reproduction table (`posbias.judges.reproduction`)."""
from pathlib import Path

from posbias.judges.reproduction import RELEASED, reproduction_rows, write_reproduction
from posbias.logs import job_log

with job_log(snakemake.log[0]):
    out = snakemake.output
    write_reproduction(reproduction_rows(RELEASED, snakemake.input.reference), Path(out.csv).with_suffix(""))
