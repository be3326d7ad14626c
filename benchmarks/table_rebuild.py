"""How long the tables take to rebuild from persisted per-query files, against re-evaluating the runs.

Run it in a directory where the workflow has finished (for example after `make demo`). It times
`snakemake --forcerun <table rules>`: every table and the figure are rebuilt from the per-query
Parquet and statistics JSON files, nothing else runs. The reference, timed in the same run, also
re-evaluates every run (`--forcerun` of the evaluation rules), which rebuilds the tables after it.
Each timing is the median of `--repeats` runs; the ratio is rebuild time over reference time.

    .venv/bin/python benchmarks/table_rebuild.py [--workdir .] [--jobs 2] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tqdm import tqdm

STEPS_DONE = re.compile(r"(\d+) of (\d+) steps \(")  # Snakemake's progress line
# The rules that only read persisted per-query or statistics files (rules/evaluation.smk).
TABLE_RULES = ["table1", "table7", "table8", "table4", "farrelevant_figure", "outcome_table",
               "first_stage_table", "dataset_tables"]
# The rules that evaluate runs (rules/evaluation.smk); the reference re-runs them before the tables.
EVALUATION_RULES = ["evaluate", "evaluate_finetuned", "evaluate_cutoff", "pool_evaluations", "evaluate_first_stage"]
ROOT = Path(__file__).resolve().parents[1]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", default=".", help="a directory where the workflow has finished")
    parser.add_argument("--jobs", type=int, default=2, help="snakemake -j")
    parser.add_argument("--repeats", type=int, default=3, help="timed repetitions; the median is reported")
    parser.add_argument("--out", default="results/benchmarks/table_rebuild.json")
    return parser.parse_args()


def snakemake(workdir: str, jobs: int, *args: str, bar: tqdm | None = None) -> str:
    """Run Snakemake and return what it printed (stdout and stderr); `bar` follows its "x of y steps" lines."""
    command = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", workdir, "-j", str(jobs),
               *args]
    lines = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        for line in process.stdout:
            lines.append(line)
            match = STEPS_DONE.search(line)
            if match and bar is not None:
                bar.total, bar.n = int(match.group(2)), int(match.group(1))
                bar.refresh()
    if process.returncode:
        raise SystemExit(f"snakemake {' '.join(args)} failed in {workdir} (exit {process.returncode}); it ended "
                         f"with:\n{''.join(lines[-20:])}")
    return "".join(lines)


def jobs_run(output: str) -> dict[str, int]:
    """Jobs per rule from snakemake's closing job-stats table."""
    counts = {}
    for line in output.splitlines():
        match = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if match and match.group(1) not in ("total", "all"):
            counts[match.group(1)] = int(match.group(2))
    return counts


def timed_forcerun(workdir: str, jobs: int, rules: list[str], repeats: int, runs: tqdm,
                   what: str) -> tuple[float, dict]:
    """Median time of `repeats` runs that force `rules`; `runs` counts the finished runs of the benchmark."""
    times, counts = [], {}
    for repeat in range(1, repeats + 1):
        with tqdm(desc=f"{what}, run {repeat} of {repeats}", unit="job", leave=False) as bar:
            start = time.perf_counter()
            # The target first: --forcerun takes the rest of the command line.
            output = snakemake(workdir, jobs, "all", "--forcerun", *rules, bar=bar)
            times.append(time.perf_counter() - start)
        counts = jobs_run(output)
        runs.update()
    if not counts:
        raise SystemExit(f"no job ran in {workdir}: has the workflow finished there?")
    return statistics.median(times), counts


def main() -> None:
    args = parse_args()
    if "Nothing to be done" not in snakemake(args.workdir, 1, "-n", "all"):
        raise SystemExit(f"the workflow in {args.workdir} has jobs left; finish it first (make demo)")
    defined = set(snakemake(args.workdir, 1, "--list-rules").split())  # the config decides which exist
    tables = [r for r in TABLE_RULES if r in defined]
    evaluation = [r for r in EVALUATION_RULES if r in defined]
    if "evaluate" not in evaluation:  # the reference would re-evaluate nothing and the ratio would mean nothing
        raise SystemExit(f"the workflow in {args.workdir} has no `evaluate` rule; EVALUATION_RULES is out of date")
    with tqdm(total=2 * args.repeats, desc="timed Snakemake runs", unit="run") as runs:
        rebuild, rebuild_jobs = timed_forcerun(args.workdir, args.jobs, tables, args.repeats, runs, "tables")
        reference, reference_jobs = timed_forcerun(args.workdir, args.jobs, tables + evaluation, args.repeats, runs,
                                                   "re-evaluation and tables")
    result = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "jobs": args.jobs, "repeats": args.repeats,
        "rebuild_tables_s": round(rebuild, 2), "rebuild_jobs": rebuild_jobs,
        "reevaluate_and_rebuild_s": round(reference, 2), "reference_jobs": reference_jobs,
        "ratio": round(rebuild / reference, 3),
    }
    out = Path(args.workdir) / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"| step | seconds | jobs | ratio |\n|---|---:|---:|---:|\n"
          f"| tables from persisted per-query files | {rebuild:.2f} | {sum(rebuild_jobs.values())} | "
          f"{rebuild / reference:.2f} |\n"
          f"| re-evaluate every run, then the tables | {reference:.2f} | {sum(reference_jobs.values())} | 1.00 |")


if __name__ == "__main__":
    main()
