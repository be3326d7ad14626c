"""What a run costs before it starts (`posbias plan`): jobs, GPU- and CPU-hours, disk and downloads, by rule.

    plan = make_plan(load_config("config/paper/study.yaml"), "config/paper/study.yaml", gpu="h200")
    print(report.text(plan))

- `dag`: the jobs, from Snakemake's own DAG of the config and targets (what `snakemake -n` would run);
- `sizes`: documents and queries (ir_datasets' metadata, the config, files already made) and downloads;
- `rates`: measured pairs per second from the benchmark files (`measurements.yaml` says which), else the SLURM
  profile's time limit;
- `costs`: each job's hours, disk and downloads, with the basis of every number;
- `report`: the table by rule and the totals, as text, JSON or Markdown (the reproduction pages' "What it costs").

docs/running.md ("What a run costs") explains how to read a plan.
"""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path
from typing import Sequence

from posbias.planning.costs import Estimator, JobCost
from posbias.planning.dag import REPOSITORY, scheduled_run
from posbias.planning.rates import PROFILE, Profile, device_named
from posbias.planning.sizes import Sizes


@dataclasses.dataclass
class Plan:
    config: str
    targets: list[str]
    device: str  # which device the rates are for, in words
    directory: str | None  # the working directory planned in (None: an empty one, the run from scratch)
    costs: list[JobCost]
    files: dict[str, str]  # the measurement files rates were read from, and why each is used
    backbones: list[str]  # for rates measured on another backbone than a job's: the two, compared
    assumed_inputs: list[str]  # files a user provides that the fresh directory stood in for (empty) to build the DAG
    date: str
    commit: str | None
    dirty: bool | None


def make_plan(cfg, config_file: str, targets: Sequence[str] = (), gpu: str | None = None,
              directory: str | None = None, profile: str | Path = PROFILE) -> Plan:
    """The plan of `snakemake --configfile config_file *targets` (run in `directory`, else from scratch), with
    rates for the GPU named `gpu` (else this machine) and `profile`'s limits; `cfg` is that file read
    (`posbias.config.load_config`)."""
    from posbias.provenance.environment import git_state

    device, device_sentence = device_named(gpu)
    jobs, assumed = scheduled_run(config_file, targets, directory)
    estimator = Estimator(cfg, Sizes(cfg, directory), device, Profile(Path(profile)))
    costs = [estimator.cost(job) for job in jobs]
    git = git_state(REPOSITORY)
    return Plan(config=str(config_file), targets=list(targets) or ["all (the default target)"],
                device=device_sentence, directory=directory, costs=costs, files=device.files if device else {},
                backbones=backbone_comparisons(costs, estimator), assumed_inputs=sorted(assumed),
                date=datetime.date.today().isoformat(), commit=(git["commit"] or "")[:7] or None, dirty=git["dirty"])


def backbone_comparisons(costs: list[JobCost], estimator: Estimator) -> list[str]:
    """For each backbone a measured rate ran on and the jobs' backbones it times: their sizes, and what follows."""
    pairs: dict[str, set[str]] = {}
    for cost in costs:
        if cost.backbones:
            pairs.setdefault(cost.backbones[0], set()).add(cost.backbones[1])
    lines = []
    for measured, theirs in sorted(pairs.items()):
        size = estimator.parameters(measured)
        sizes = {b: estimator.parameters(b) for b in sorted(theirs)}
        larger = size.known and all(s.known and s.value >= size.value for s in sizes.values())
        lines.append(
            f"measured with {measured} ({_parameters(size)}); the jobs' backbones: "
            + ", ".join(f"{b} ({_parameters(s)})" for b, s in sizes.items())
            + (": each at least as large, so these hours are lower bounds" if larger else
               ": sizes differ or are unknown, so these hours only indicate the order of magnitude"))
    return lines


def _parameters(count) -> str:
    return f"{count.value / 1e6:,.1f}M parameters" if count.known else "size unknown"
