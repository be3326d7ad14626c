"""The workflow as an installed posbias runs it, without the clone.

The Snakefile, its rules, scripts and report captions stay at the top of the repository (the design card's shape); a
wheel carries a copy of them at `posbias/workflow/files` (setup.py puts it there), and an editable install of the
checkout runs the checkout's own. A run directory holds what a user edits: the config (`config.yaml`, with the
paper configs and regression values under `config/`) and the profiles. `posbias workflow init DIR` writes one;
`posbias workflow run` starts Snakemake in it on the packaged Snakefile, which is how `snakemake` runs in a clone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from posbias.errors import InputError
from posbias.io import atomic_directory

PACKAGED = Path(__file__).resolve().parent / "files"
CHECKOUT = Path(__file__).resolve().parents[3]  # src/posbias/workflow -> the repository's root
# What a run directory holds: the files a user changes, copied from the workflow's own.
RUN_FILES = ("config.yaml", "config", "profiles")


def workflow_root() -> Path:
    """The directory holding the Snakefile this posbias runs: the wheel's copy, else the checkout's."""
    for root in (PACKAGED, CHECKOUT):
        if (root / "Snakefile").is_file() and (root / "rules").is_dir():
            return root
    raise InputError(f"{PACKAGED}: no Snakefile here: this posbias was installed without its workflow (install it "
                     f"from a wheel or sdist built with setup.py, or run from a clone)")


def init_directory(directory: str | os.PathLike) -> list[str]:
    """Write a run directory: the embedded default's config.yaml, the configs under config/ and the profiles.
    Refused (nothing written) where the directory exists and is not empty. Returns the names written."""
    target = Path(directory)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InputError(f"{directory}: exists and is not an empty directory (posbias workflow init writes a new "
                         f"run directory; an existing one keeps its config)")
    root = workflow_root()
    with atomic_directory(target) as staging:
        for name in RUN_FILES:
            source = root / name
            if source.is_dir():
                shutil.copytree(source, staging / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(source, staging / name)
    return list(RUN_FILES)


def snakemake_command(arguments: list[str]) -> list[str]:
    """Snakemake on the workflow's Snakefile, with the environment's own interpreter (the one posbias runs in)."""
    return [sys.executable, "-m", "snakemake", "--snakefile", str(workflow_root() / "Snakefile"), *arguments]


# Snakemake's flags that build each job's software itself: the packaged envs/posbias.yaml installs posbias from the
# clone (its scripts/posbias link), which an installed package does not carry
CONDA_FLAGS = ("--use-conda", "--sdm", "--software-deployment-method")


def run(directory: str | os.PathLike, arguments: list[str]) -> int:
    """Run Snakemake in the run directory (its config.yaml and profiles/default are found there, as in a clone);
    its exit status. The packaged workflow's jobs run in this environment, the one posbias is installed in: a
    conda deployment is refused (it needs the clone)."""
    if workflow_root() == PACKAGED and any(arg.split("=")[0] in CONDA_FLAGS for arg in arguments):
        raise InputError("the installed workflow's jobs run in the environment posbias is installed in: "
                         "--use-conda (--software-deployment-method) needs a clone, whose envs/posbias.yaml "
                         "installs it")
    if not (Path(directory) / "config.yaml").is_file():
        raise InputError(f"{directory}: no config.yaml (write a run directory with `posbias workflow init "
                         f"{directory}`)")
    return subprocess.call(snakemake_command(arguments), cwd=directory)
