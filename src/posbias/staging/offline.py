"""Whether jobs run without a network, and what a job says when an input it needs was not staged.

The switch is the environment variable `POSBIAS_OFFLINE=1`, set where the workflow starts. Whether a machine
reaches the internet is a fact of the machine, not of the experiment: the same config runs on a workstation and
on a cluster's compute nodes, with the same config hash and the same results. An environment variable also reaches
every job without a profile's help: Snakemake's local jobs inherit it, and so do SLURM jobs (sbatch exports the
submitting environment; docs/running.md). The Snakefile turns it into the libraries' own switches
(`job_environment`: HF_HUB_OFFLINE, HF_DATASETS_OFFLINE), so that no hub call waits for a network that is not
there; ir_datasets has none, so its files are checked before it reads them (`posbias.staging.irds`).
"""

from __future__ import annotations

import json
import os
from typing import Iterable, Mapping

from posbias.errors import InputError

OFFLINE_VARIABLE = "POSBIAS_OFFLINE"
# The config file(s) the workflow runs, named by the stage command a job's "not staged" message gives.
CONFIG_VARIABLE = "POSBIAS_STAGE_CONFIG"
# The config's `revisions` (hub id -> revision) as JSON: jobs receive no config, and every load by name reads it.
REVISIONS_VARIABLE = "POSBIAS_REVISIONS"
# What the Hugging Face libraries read: the hub client (transformers and sentence-transformers load through it)
# and `datasets`. TRANSFORMERS_OFFLINE is the older name huggingface_hub still honours.
LIBRARY_SWITCHES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")
TRUE = ("1", "true", "yes", "on")


def _set(variable: str) -> bool:
    return os.environ.get(variable, "").strip().lower() in TRUE


def is_offline() -> bool:
    """Jobs read only staged inputs: POSBIAS_OFFLINE=1, or HF_HUB_OFFLINE=1 (a command started by hand that set
    only the hub's switch is offline all the same)."""
    return _set(OFFLINE_VARIABLE) or _set("HF_HUB_OFFLINE")


class NotStagedError(InputError):
    """An input a job needs is not on this machine, and the job runs offline."""


def stage_command() -> str:
    return f"posbias stage --config {os.environ.get(CONFIG_VARIABLE) or 'CONFIG'}"


def not_staged(what: str) -> NotStagedError:
    """The one line a job ends with when `what` is missing offline."""
    return NotStagedError(f"{what} not staged: run {stage_command()} on a machine with internet")


def job_environment(config_files: Iterable[str], revisions: Mapping[str, str]) -> dict[str, str]:
    """What the Snakefile adds to the environment its jobs inherit: the config files, for the stage command that
    messages name; the config's pinned `revisions`; and, with POSBIAS_OFFLINE=1, the libraries' own offline
    switches."""
    environment = {CONFIG_VARIABLE: " ".join(str(path) for path in config_files),
                   REVISIONS_VARIABLE: json.dumps(dict(revisions), sort_keys=True)}
    if _set(OFFLINE_VARIABLE):
        environment.update(dict.fromkeys(LIBRARY_SWITCHES, "1"))
    return environment
