"""Running the workflow from the tests: `snakemake` in a working directory of its own, the config it reads there,
the jobs a dry run schedules, the tiny config, and cheap copies of a finished run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
TARGETS = ("all",)  # what `make demo` asks for: every table and figure of the config


def default_config() -> dict:
    return yaml.safe_load((ROOT / "config.yaml").read_text())


def tiny_config(backbone: str) -> dict:
    """config/test/tiny.yaml (two seeds; FirstP, MaxP and PARADE Attn trained, two RankGPT rows through a mock)
    with a tiny random BERT in place of MiniLM."""
    config = yaml.safe_load((ROOT / "config" / "test" / "tiny.yaml").read_text())
    for spec in config["models"].values():
        if spec["ranker"] == "rankgpt":
            continue  # a language model's (a mock), no backbone
        spec["args"] = {**spec["args"], "backbone": backbone}
        spec["args"].pop("backbone_layers", None)  # the tiny BERT has 2 layers
    config["retrievers"]["hybrid"]["encoder"]["model"] = backbone
    for spec in config["probes"]["scorers"].values():
        if spec["kind"] == "dense":
            spec["query_model"] = backbone
    return config


def run_snakemake(workdir: Path, *args: str, check: bool = True, repository: Path = ROOT,
                  env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`snakemake` in `workdir` with the Snakefile of `repository` (another copy's: with `env` importing its
    src/)."""
    result = subprocess.run([*SNAKEMAKE, "-s", str(repository / "Snakefile"), "-d", str(workdir), *args],
                            capture_output=True, text=True, timeout=900, env=env)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def stage(workdir: Path, *args: str, check: bool = True,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`posbias stage` in `workdir` (the run directory, where it keeps results/staging.lock.yaml)."""
    result = subprocess.run([sys.executable, "-m", "posbias.cli", "stage", *args], cwd=workdir, capture_output=True,
                            text=True, timeout=300, env=env)
    if check and result.returncode != 0:
        raise AssertionError(f"posbias stage {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def write_config(workdir: Path, config: dict) -> Path:
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def scheduled_jobs(dry_run_output: str) -> list[tuple[str, str]]:
    """(rule, wildcards) for each job a dry run would execute."""
    jobs, rule = [], None
    for line in dry_run_output.splitlines():
        match = re.match(r"^(?:local)?rule (\w+):", line.strip())
        if match and match.group(1) != "all":  # the target rule does no work
            rule = match.group(1)
            jobs.append([rule, ""])
        elif match:
            rule = None
        elif line.strip().startswith("wildcards:") and rule:
            jobs[-1][1] = line.strip()[len("wildcards:"):].strip()
    return [tuple(job) for job in jobs]


def copy_of_run(run: Path, destination: Path) -> Path:
    """A copy of a finished run that a test may rerun jobs in, leaving the original as it was. results/ is
    hard-linked: Snakemake deletes a job's outputs (and logs) before running it, and posbias writes every file
    through a staging name it then renames, so a rerun replaces a link and never writes through it. The rest is
    copied: Snakemake rewrites its metadata in .snakemake/ in place, and the language-model cache grows."""
    def results_at_top(directory: str, names: list[str]) -> set[str]:
        return {"results"} if Path(directory) == run else set()

    shutil.copytree(run, destination, symlinks=True, ignore=results_at_top)
    shutil.copytree(run / "results", destination / "results", symlinks=True, copy_function=os.link)
    return destination
