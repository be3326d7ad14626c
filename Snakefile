# posbias: positional bias in long-document ranking.
#
#   snakemake -j 8 results/table1.tex                  # main table, embedded default
#   snakemake -j 8 --configfile my.yaml results/table4.tex
#   snakemake --profile profiles/slurm results/table1.tex
#
# Stages (one rules/*.smk each): data -> retrieval -> train -> rerank -> evaluate -> stats -> report.

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config.yaml"


validate(config, "schemas/config.schema.yaml")


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/retrieval.smk"
include: "rules/train.smk"
include: "rules/rerank.smk"
include: "rules/evaluate.smk"
include: "rules/stats.smk"
include: "rules/report.smk"


rule all:
    input:
        "results/table1.tex",
        "results/table4.tex",
        FIGURES,
    default_target: True
