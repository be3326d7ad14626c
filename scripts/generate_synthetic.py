"""Snakemake entry: write the embedded collection."""
from pathlib import Path

from posbias.logs import job_log
from posbias.data.steps import generate_synthetic

with job_log(snakemake.log[0]):
    generate_synthetic(snakemake.params.settings, snakemake.params.tokenizer,
                       out_dir=str(Path(snakemake.output.docs).parent),
                       passages_dir=str(Path(snakemake.output.passages).parent))
