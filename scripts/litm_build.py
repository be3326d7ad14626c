"""Snakemake entry: Lost in the Middle's data files of one task, one per setting (size and gold position)."""
from posbias.logs import job_log
from posbias.litm.steps import build_kv, build_qa

with job_log(snakemake.log[0]):
    outputs = dict(zip(snakemake.params.names, snakemake.output, strict=True))
    if snakemake.rule == "litm_build_qa":
        build_qa(snakemake.params.section, snakemake.input.get("retrieval"), outputs)
    else:
        build_kv(snakemake.params.section, outputs)
