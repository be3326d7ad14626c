# posbias: positional bias in long-document ranking.
#
#   snakemake -j 8 results/table1.tex                  # main table, embedded default
#   snakemake -j 8 results/table4.tex --configfile my.yaml
#   snakemake --profile profiles/slurm results/table1.tex
#
#   snakemake -j 8 --configfile config/paper/robust04.yaml     # a paper-scale experiment (GPU)
#
# Targets go before --configfile: Snakemake reads every word after it as another config file.
#
# Stages (a folder of src/posbias each, and a rules/<stage>.smk where it has rules): data -> farrelevant -> retrieval
# -> training (train, finetune, cross-validation) -> rerank -> evaluation (per-query values, seed pools, tables,
# figures) -> provenance; the analyses: Lost in the Middle (litm: data -> predictions -> scores -> tables, figures),
# the bias probes (probes: Re-DocRED pairs -> one scoring job per scorer -> paired tests, table, figures; RAG
# poisoning), the position sweep, the first relevant positions and the audit.
#
#   snakemake --report results/report.zip                # tables and figures as an offline HTML report

import os

from snakemake.logging import logger
from snakemake.resources import Resource
from snakemake.utils import min_version

from posbias.config import ConfigError, load_config
from posbias.config.registry import STAGES, reported_name, stage_rules
from posbias.errors import InputError
from posbias.gpu_pool import LOCAL_RUN_VARIABLE, check_request, machine_gpus
from posbias.staging.offline import job_environment

min_version("9.0")


# The config is read, layered (`base:` files), validated against the package's schema, cross-checked
# and derived by posbias.config, the same layer the CLI uses. A config file named on the command line
# replaces the embedded default instead of being merged into it, so a paper config never inherits the
# default's query sets or models; `--config key=value` overrides go on top.
try:
    CFG = load_config(*(workflow.config_settings.configfiles or ["config.yaml"]),
                      overrides=dict(workflow.config_settings.config))
except ConfigError as err:
    raise SystemExit(f"config error: {err}")
for _warning in CFG.warnings:
    logger.warning(_warning)
config.clear()
config.update(CFG.data)

# What every job inherits (posbias.staging.offline): the config files and pinned hub revisions, and with
# POSBIAS_OFFLINE=1 (a cluster whose nodes have no internet) the Hugging Face libraries' offline switches, so that a
# job reads only what `posbias stage` fetched and names anything missing at once.
os.environ.update(job_environment(workflow.config_settings.configfiles or ["config.yaml"], CFG.revisions))


report: "report/workflow.rst"


# One local language model's decoder at a time (rules/litm.smk says why), unless the command line says otherwise. Set
# here, not in profiles/default: a `--resources` on the command line (gpu=N) replaces the profile's whole list.
if "local_decoder" not in workflow.global_resources:
    workflow.global_resources["local_decoder"] = Resource("local_decoder", 1)


# One machine's GPUs (posbias.gpu_pool): its GPU jobs claim their own devices (the jobs inherit the mark), and
# `--resources gpu=N` for more devices than it has stops the run before any job starts. Done here, not while the file
# is read: only now does Snakemake say whether jobs run on this machine (a SLURM run's gpu=N counts the cluster's).
onstart:
    if workflow.local_exec:
        os.environ[LOCAL_RUN_VARIABLE] = "1"
        _gpus = machine_gpus()
        if "gpu" in workflow.global_resources:
            try:
                check_request(workflow.global_resources["gpu"].value, _gpus)
            except InputError as err:
                logger.error(f"resources error: {err}")
                raise SystemExit(2)
        elif len(_gpus) > 1:
            logger.warning(f"this machine has {len(_gpus)} GPUs: give --resources gpu={len(_gpus)} to run that many "
                           f"GPU jobs at once, each on its own device; without it, GPU jobs beyond them wait for one")


include: "rules/common.smk"
# Every stage's rules, rules/<stage>.smk, in the order of the stages' registry (posbias.config.registry.STAGES):
# data, farrelevant, retrieval, training, rerank, evaluation, provenance, then the analyses. Each may define the
# targets it adds to rule all (EVALUATION_REPORTED, SWEEP_REPORTED, ...).
for _rules in stage_rules(workflow.basedir):

    include: _rules


rule all:
    """the default target: every table, figure and report of the config, excluded seeds' checkpoints, the provenance
    manifest

    By hand: `snakemake` (the workflow itself)"""
    input:
        # every stage's tables, figures and reports, and the provenance manifest (code, environment, config hash,
        # weights, every result's sha256), whose job reads all the others
        [globals().get(reported_name(stage), []) for stage in STAGES],
        # seeds trained but left out of the tables (models.<name>.excluded_seeds): their loss curves are kept
        [training_paths.checkpoint(m, s) for m, s in CFG.models.excluded_checkpoints],
    default_target: True
