"""Snakemake entry: every probe's document pairs, the heatmap's queries and the query table's counts."""
from posbias.logs import job_log
from posbias.probes.steps import build

with job_log(snakemake.log[0]):
    pairs = dict(zip(snakemake.params.probes, snakemake.output.pairs, strict=True))
    replacements = snakemake.output.replacements[0] if snakemake.output.replacements else None
    build(snakemake.params.section, pairs, snakemake.output.heatmap, snakemake.output.query_table, replacements,
          snakemake.params.llm, snakemake.params.cache)
