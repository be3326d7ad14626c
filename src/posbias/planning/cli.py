"""What a run costs before it starts (`posbias.planning`): its jobs from Snakemake's DAG of the config and targets,
by rule, with GPU-hours, CPU-hours, the disk its outputs take and what it downloads, each rate with its source
(a benchmark file, or the SLURM profile's time limit where nothing was measured).

    posbias plan --config config/paper/study.yaml                      (this machine; the default target, all)
    posbias plan --config config/paper/study.yaml --gpu h200           (rates measured on an H200)
    posbias plan --config config/paper/robust04.yaml results/robust04/table8.tex --gpu h200
    posbias plan --config config/paper/study.yaml --directory paper    (only what that run directory still needs)
    posbias plan --config config/paper/study.yaml --gpu h200 --json
    posbias plan --config config/paper/study.yaml --gpu h200 --markdown --into docs/reproduction/study.md
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

from posbias.command_flags import add_command, read_config_object, reads
from posbias.errors import InputError

# The block of a reproduction page that `--into` rewrites: everything between these two lines.
PAGE_BEGIN, PAGE_END = "<!-- plan: begin (posbias plan --markdown --into) -->", "<!-- plan: end -->"


def register(commands) -> None:
    plan = add_command(commands, "plan", plan_command, usage_check=_usage,
                       help="before a run: its jobs by rule (submitted to the cluster or local), GPU-hours, "
                            "CPU-hours, disk and downloads, with the source of every rate, and totals")
    reads(plan, "--config", required=True, help="the config file the run would use (snakemake --configfile)")
    plan.add_argument("targets", nargs="*", metavar="TARGET",
                      help="the run's targets, as snakemake takes them (default: the workflow's default, all)")
    plan.add_argument("--gpu", metavar="NAME",
                      help="rates measured on this GPU (h200; src/posbias/planning/measurements.yaml lists them); "
                           "default: this machine (its CPU when torch sees no GPU)")
    reads(plan, "--directory", kind="directory",
          help="plan what this working directory still needs (default: an empty one, the whole run)")
    reads(plan, "--profile", help="the SLURM profile whose time limits and cores apply (default: "
                                  "profiles/slurm/profile.yaml)")
    output = plan.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the plan as JSON")
    output.add_argument("--markdown", action="store_true",
                        help="print the plan as Markdown (a reproduction page's \"What it costs\" section)")
    plan.add_argument("--into", metavar="PAGE",
                      help=f"with --markdown: write it into PAGE between the lines {PAGE_BEGIN} and {PAGE_END}")


def _usage(args) -> str | None:
    if args.into and not args.markdown:
        return "--into needs --markdown (it writes the Markdown into a page)"
    return None


def plan_command(args) -> None:
    from posbias.planning import make_plan, report
    from posbias.planning.rates import PROFILE

    plan = make_plan(read_config_object(args.config), args.config, args.targets, gpu=args.gpu,
                     directory=args.directory, profile=args.profile or PROFILE)
    if args.json:
        sys.stdout.write(report.as_json(plan))
    elif args.markdown:
        command = " ".join(["posbias plan --config", shlex.quote(args.config), *map(shlex.quote, args.targets),
                            *(["--gpu", args.gpu] if args.gpu else []), "--markdown"])
        text = report.markdown(plan, command)
        if args.into:
            write_into(Path(args.into), text)
        else:
            sys.stdout.write(text)
    else:
        sys.stdout.write(report.text(plan))


def write_into(page: Path, text: str) -> None:
    """Replace what lies between the page's plan markers by `text` (the markers stay)."""
    if not page.is_file():
        raise InputError(f"--into {page}: no such file")
    content = page.read_text(encoding="utf-8")
    pattern = re.compile(rf"^{re.escape(PAGE_BEGIN)}\n.*?^{re.escape(PAGE_END)}$", flags=re.M | re.S)
    if len(pattern.findall(content)) != 1:
        raise InputError(f"--into {page}: needs one block from the line {PAGE_BEGIN} to the line {PAGE_END}")
    page.write_text(pattern.sub(lambda _: f"{PAGE_BEGIN}\n{text}{PAGE_END}", content), encoding="utf-8")
