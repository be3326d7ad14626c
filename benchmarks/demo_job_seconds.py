"""Where a finished workflow run's time went, by rule, from Snakemake's own log (issue 33, point 7).

    python benchmarks/demo_job_seconds.py                 # the newest run logged in this directory
    python benchmarks/demo_job_seconds.py --directory /tmp/clone --log .snakemake/log/2026-...snakemake.log

Snakemake logs each job's start (`[date]` then `rule NAME:` / `localrule NAME:` and its `jobid`) and its end
(`[date]` then `Finished jobid: N (Rule: NAME)`), to the second. From those: per rule the jobs, their seconds
(summed, and the longest), their CPU seconds from the jobs' own logs (`job usage:`, to the end of the job's
work), and where the rule has a `benchmark:` file under results/, the CPU seconds it recorded (sampled: a job of
16 to 45 s shows its CPU at 15 s); for the run, its wall time, the seconds in which no job ran (the scheduler's
own time between jobs, and the start), and how busy the cores were (job seconds over wall time x cores). Compare
two runs (before and after a change) on the same machine within the hour: this machine's speed varies by up to a third.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from datetime import datetime
from pathlib import Path

STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
START = re.compile(r"^(?:local)?rule (\w+):$")
JOBID = re.compile(r"^\s+jobid: (\d+)$")
FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: (\w+)\)$")
LOG = re.compile(r"^\s+log: (.+)$")
USAGE = re.compile(r"job usage: [\d.]+ s, ([\d.]+) CPU s")


def read_jobs(log: Path) -> list[tuple[str, datetime, datetime]]:
    """(rule, start, end) of every job the log saw finish."""
    stamp, pending, started, jobs = None, None, {}, []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if match := STAMP.match(line):
            stamp = datetime.strptime(" ".join(match.group(1).split()), "%a %b %d %H:%M:%S %Y")
        elif match := START.match(line):
            pending = (match.group(1), stamp)
        elif (match := JOBID.match(line)) and pending:
            started[match.group(1)] = pending
            pending = None
        elif match := FINISHED.match(line):
            rule, begun = started.pop(match.group(1), (match.group(2), None))
            if begun is not None:
                jobs.append((rule, begun, stamp))
    return jobs


def idle_seconds(jobs: list[tuple[str, datetime, datetime]], first: datetime, last: datetime) -> float:
    """Seconds between `first` and `last` in which no job ran."""
    covered, end = 0.0, first
    for _, start, stop in sorted(jobs, key=lambda job: job[1]):
        if stop <= end:
            continue
        covered += (stop - max(start, end)).total_seconds()
        end = stop
    return (last - first).total_seconds() - covered


def benchmark_cpu(directory: Path) -> dict[str, float]:
    """CPU seconds by rule from the `benchmark:` files (results/benchmarks/<rule>/..., audit's under audit/)."""
    totals: dict[str, float] = defaultdict(float)
    for path in (directory / "results").rglob("benchmarks/**/*.tsv"):
        parts = path.relative_to(directory / "results").parts
        rule = "audit_battery" if parts[0] == "audit" else parts[1]
        rows = path.read_text().splitlines()
        if len(rows) > 1:
            header, values = rows[0].split("\t"), rows[-1].split("\t")
            if "cpu_time" in header:
                totals[rule] += float(values[header.index("cpu_time")])
    return totals


def log_cpu(log: Path, directory: Path) -> dict[str, float]:
    """CPU seconds by rule from the jobs' own logs (`job usage:`, written by posbias.logs.job_log at the end of a
    job's work, without the interpreter's exit; a job before it has none): the log files each job of `log` (a
    Snakemake log) named."""
    totals: dict[str, float] = defaultdict(float)
    rule = None
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if match := START.match(line):
            rule = match.group(1)
        elif (match := LOG.match(line)) and rule:
            for name in match.group(1).split(", "):
                path = directory / name
                found = USAGE.findall(path.read_text(errors="replace")) if path.is_file() else []
                if found:
                    totals[rule] += float(found[-1])
            rule = None
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--directory", default=".", help="the workflow's working directory")
    parser.add_argument("--log", help="a Snakemake log (default: the newest in .snakemake/log with finished jobs)")
    parser.add_argument("--cores", type=int, default=2, help="the -j the run had")
    args = parser.parse_args()
    directory = Path(args.directory)
    logs = [Path(args.log)] if args.log else sorted((directory / ".snakemake" / "log").glob("*.snakemake.log"))
    jobs, log = [], None
    for candidate in reversed(logs):
        jobs, log = read_jobs(candidate if candidate.is_absolute() else directory / candidate), candidate
        if jobs:
            break
    if not jobs:
        raise SystemExit(f"{directory}: no Snakemake log with finished jobs")
    by_rule: dict[str, list[float]] = defaultdict(list)
    for rule, start, stop in jobs:
        by_rule[rule].append((stop - start).total_seconds())
    first, last = min(j[1] for j in jobs), max(j[2] for j in jobs)
    wall, busy = (last - first).total_seconds(), sum(sum(v) for v in by_rule.values())
    cpu, exact = benchmark_cpu(directory), log_cpu(log if log.is_absolute() else directory / log, directory)
    print(f"{log.name}: {len(jobs)} jobs, {wall:.0f} s from the first job's start to the last one's end; "
          f"job seconds {busy:.0f} ({busy / (max(wall, 1) * args.cores):.0%} of {args.cores} cores); "
          f"no job running for {idle_seconds(jobs, first, last):.0f} s")
    # the benchmark files' CPU is Snakemake's last sample (every 0.5 s for 15 s, then every 30 s): a job of 16 to
    # 45 s shows its CPU at 15 s; the jobs' logs have it to the end of their work
    print("| rule | jobs | seconds | longest | CPU seconds (job logs) | CPU seconds (benchmark files, sampled) |")
    print("|---|---|---|---|---|---|")
    for rule, seconds in sorted(by_rule.items(), key=lambda item: -sum(item[1])):
        print(f"| {rule} | {len(seconds)} | {sum(seconds):.0f} | {max(seconds):.0f} | "
              + " | ".join(f"{totals[rule]:.0f}" if rule in totals else "–" for totals in (exact, cpu)) + " |")


if __name__ == "__main__":
    main()
