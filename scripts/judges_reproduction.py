"""Snakemake entry: the Judging-the-Judges reproduction table (`posbias.judges.reproduction`)."""
from pathlib import Path

from posbias.judges.reproduction import RELEASED, cell_average_rows, reproduction_rows, write_reproduction
from posbias.logs import job_log

with job_log(snakemake.log[0]):
    out = snakemake.output
    reference = snakemake.input.reference
    write_reproduction(reproduction_rows(RELEASED, reference), Path(out.csv).with_suffix(""),
                       cell_average_rows(RELEASED, reference))
