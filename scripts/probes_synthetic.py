"""Snakemake entry: a synthetic Re-DocRED file (the demo's probes read it like the released test_revised.json)."""
from posbias.logs import job_log
from posbias.docred.synthetic import write_synthetic_redocred

with job_log(snakemake.log[0]):
    settings = snakemake.params.synthetic
    write_synthetic_redocred(snakemake.output[0], seed=settings["seed"], n_documents=settings["n_documents"])
