# posbias: positional bias in long-document ranking.
#
#   snakemake -j 8 results/table1.tex                  # main table, embedded default
#   snakemake -j 8 results/table4.tex --configfile my.yaml
#   snakemake --profile profiles/slurm results/table1.tex
#
#   snakemake -j 8 --configfile config/paper/robust04.yaml     # a paper-scale experiment (GPU)
#
# Stages (one rules/*.smk each): data -> retrieval -> train -> rerank (cross_validation, finetune)
# -> evaluate -> stats -> report.
#
#   snakemake --report results/report.zip                # tables and figures as an offline HTML report

from pathlib import Path

from snakemake.utils import min_version, validate

import posbias

min_version("9.0")


# A config file named on the command line replaces the embedded default instead of being
# merged into it, so a paper config never inherits the default's query sets or models.
if not workflow.overwrite_configfiles:

    configfile: "config.yaml"



validate(config, str(Path(posbias.__file__).parent / "config.schema.yaml"))


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/retrieval.smk"
include: "rules/train.smk"
include: "rules/rerank.smk"
include: "rules/cross_validation.smk"
include: "rules/finetune.smk"
include: "rules/evaluate.smk"
include: "rules/stats.smk"
include: "rules/report.smk"


rule all:
    input:
        REPORTED,
    default_target: True
