"""Snakemake entry: Tables 9 (documents) and 10 (queries) from the persisted statistics."""
from posbias.logs import job_log
from posbias.evaluation.report import dataset_tables

with job_log(snakemake.log[0]):
    out = dict(snakemake.output.items())
    dataset_tables(dict(zip(snakemake.params.collections, snakemake.input.collections, strict=True)),
                   dict(zip(snakemake.params.querysets, snakemake.input.querysets, strict=True)),
                   snakemake.params.tokenizer,
                   {k.removeprefix("documents_"): v for k, v in out.items() if k.startswith("documents_")},
                   {k.removeprefix("queries_"): v for k, v in out.items() if k.startswith("queries_")})
