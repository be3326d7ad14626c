"""A plan as a table by rule with totals: aligned text for a terminal, JSON for programs, Markdown for the docs.

Each row is one rule: its jobs (submitted to the cluster or local), GPU-hours, CPU-hours (core-hours of its
submitted jobs without a GPU), the disk its outputs take and what it downloads, and the sources its hours come from
as numbered notes under the table. A download that several jobs share (one ir_datasets archive, one backbone's
weights) is counted once, in the first rule (by name) that needs it. Unknown sizes are left out of the sums and
listed.
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict

import pandas as pd

from posbias.planning import Plan
from posbias.planning.costs import BASES, LIMIT, LOCAL, MEASURED, OTHER_BACKBONE, Item, JobCost

DISK_KINDS = (("token store", "token stores"), ("dense vectors", "dense vectors"), ("FAISS index", "FAISS indexes"),
              ("checkpoint", "checkpoints"), ("run ", "runs"))
BASIS_WORDS = {MEASURED: "from measured rates", OTHER_BACKBONE: "from rates measured on another backbone (*)",
               LIMIT: "at the profile's time limits (upper bounds)"}
NUMBERS = ("cluster", "local", "GPU-h", "CPU-h", "disk", "download")  # the table's right-aligned columns


@dataclasses.dataclass
class Summary:
    """A plan added up: rows by rule, notes (the sources), totals, and what could not be sized."""
    rows: pd.DataFrame  # rule, submitted, local, gpu_jobs, gpu_hours, cpu_hours, disk_bytes, download_bytes, hours_from
    notes: list[str]
    totals: dict
    unknown_disk: dict[str, int]  # rule -> outputs of unknown size
    unknown_downloads: list[str]
    over_limit: list[str]


def summarise(plan: Plan) -> Summary:
    costs = sorted(plan.costs, key=lambda c: (c.job.rule, sorted(c.job.wildcards.items())))
    downloads, unknown_downloads = _first_downloads(costs)
    notes: dict[str, int] = {}
    rows: dict[str, dict] = defaultdict(lambda: {"submitted": 0, "local": 0, "gpu_jobs": 0, "gpu_hours": 0.0,
                                                 "cpu_hours": 0.0, "disk_bytes": 0, "download_bytes": 0,
                                                 "sources": defaultdict(int)})
    unknown_disk: dict[str, int] = defaultdict(int)
    by_basis = {"gpu": defaultdict(float), "cpu": defaultdict(float)}
    disk_by_kind: dict[str, int] = defaultdict(int)
    for cost in costs:
        row = rows[cost.job.rule]
        row["local" if cost.job.local else "submitted"] += 1
        row["gpu_jobs"] += bool(cost.job.gpus)
        row["gpu_hours"] += cost.gpu_hours
        row["cpu_hours"] += cost.cpu_hours
        by_basis["gpu"][cost.basis] += cost.gpu_hours
        by_basis["cpu"][cost.basis] += cost.cpu_hours
        if cost.basis != LOCAL:
            numbers = ",".join(str(notes.setdefault(source, len(notes) + 1)) for source in cost.sources)
            row["sources"][f"[{numbers}]" + ("*" if cost.backbones else "")] += 1
        for item in cost.disk:
            if item.bytes is None:
                unknown_disk[cost.job.rule] += 1
            else:
                row["disk_bytes"] += item.bytes
                disk_by_kind[_disk_kind(item)] += item.bytes
        row["download_bytes"] += sum(d.bytes or 0 for d in downloads.get(id(cost), []))
    frame = pd.DataFrame([{"rule": rule, **{k: v for k, v in row.items() if k != "sources"},
                           "hours_from": ", ".join(f"{n} {jobs}" for n, jobs in row["sources"].items())}
                          for rule, row in rows.items()])
    if not frame.empty:  # the costliest first; rules whose jobs all run locally last
        frame = frame.assign(all_local=frame["submitted"] == 0).sort_values(
            ["all_local", "gpu_hours", "cpu_hours", "rule"], ascending=[True, False, False, True]
        ).drop(columns="all_local").reset_index(drop=True)
    submitted = sum(not c.job.local for c in costs)
    totals = {
        "jobs": len(costs), "submitted": submitted, "local": len(costs) - submitted,
        "gpu_jobs": sum(bool(c.job.gpus) for c in costs),
        "gpu_hours": sum(by_basis["gpu"].values()), "cpu_hours": sum(by_basis["cpu"].values()),
        "gpu_hours_by_basis": {b: by_basis["gpu"][b] for b in BASES if by_basis["gpu"][b]},
        "cpu_hours_by_basis": {b: by_basis["cpu"][b] for b in BASES if by_basis["cpu"][b]},
        "disk_bytes": sum(disk_by_kind.values()), "disk_by_kind": dict(disk_by_kind),
        "download_bytes": sum(d.bytes or 0 for items in downloads.values() for d in items),
    }
    return Summary(frame, list(notes), totals, dict(unknown_disk), unknown_downloads,
                   [c.over_limit for c in costs if c.over_limit])


def _first_downloads(costs: list[JobCost]) -> tuple[dict[int, list[Item]], list[str]]:
    """Each download once, with the first job (in rule order) that needs it; and those of unknown size."""
    seen, first, unknown = set(), defaultdict(list), []
    for cost in costs:
        for item in cost.downloads:
            key = item.key or item.what
            if key in seen:
                continue
            seen.add(key)
            first[id(cost)].append(item)
            if item.bytes is None:
                unknown.append(f"{item.what} ({item.source})")
    return first, unknown


def _disk_kind(item: Item) -> str:
    return next((name for prefix, name in DISK_KINDS if item.what.startswith(prefix)), "other")


# --- rendering -----------------------------------------------------------------------------------------------

def size(n_bytes: float) -> str:
    if not n_bytes:
        return "0"
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:,.1f} {unit}"
    return f"{n_bytes:,.0f} B"


def _hours(value: float) -> str:
    return f"{value:,.1f}" if value else "."


def table(summary: Summary) -> pd.DataFrame:
    """The rows as printed: "." for nothing, "+?" where some outputs could not be sized."""
    frame = summary.rows
    return pd.DataFrame({
        "rule": frame["rule"], "cluster": frame["submitted"], "local": frame["local"],
        "GPU-h": frame["gpu_hours"].map(_hours), "CPU-h": frame["cpu_hours"].map(_hours),
        "disk": [(size(d) if d else ".") + ("+?" if summary.unknown_disk.get(r) else "")
                 for r, d in zip(frame["rule"], frame["disk_bytes"])],
        "download": frame["download_bytes"].map(lambda b: size(b) if b else "."),
        "hours from": frame["hours_from"],
    })


def aligned(frame: pd.DataFrame) -> str:
    """A table as text: names and sources aligned left, numbers right."""
    cells = [list(frame.columns)] + [[str(v) for v in row] for row in frame.itertuples(index=False)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(frame.columns))]
    return "\n".join("  ".join(cell.rjust(width) if column in NUMBERS else cell.ljust(width)
                               for cell, width, column in zip(row, widths, frame.columns)).rstrip()
                     for row in cells)


def totals(summary: Summary) -> list[tuple[str, str, str]]:
    """The totals as (what, total, of which) rows, for the text and the Markdown alike."""
    t = summary.totals
    found = [("jobs", f"{t['jobs']:,}",
              f"{t['submitted']:,} submitted to the cluster ({t['gpu_jobs']:,} with a GPU), {t['local']:,} local")]
    for kind in ("gpu", "cpu"):
        found.append((f"{kind.upper()}-hours", f"{t[f'{kind}_hours']:,.1f}",
                      "; ".join(f"{v:,.1f} {BASIS_WORDS[b]}" for b, v in t[f"{kind}_hours_by_basis"].items())))
    kinds = [f"{name} {size(b)}" for name, b in sorted(t["disk_by_kind"].items(), key=lambda kv: -kv[1])]
    if "token stores" in t["disk_by_kind"]:
        kinds.append("token stores at their cap, an upper bound")
    if summary.unknown_disk:
        kinds.append(f"{sum(summary.unknown_disk.values())} outputs of unknown size not counted")
    found.append(("disk", size(t["disk_bytes"]), "; ".join(kinds) or "none estimated"))
    found.append(("downloads", size(t["download_bytes"]),
                  f"{len(summary.unknown_downloads)} of unknown size not counted" if summary.unknown_downloads
                  else "every one sized"))
    return found


def text(plan: Plan) -> str:
    summary = summarise(plan)
    where = plan.directory or "an empty working directory (the whole run)"
    lines = [f"posbias plan: {plan.config}, targets {' '.join(plan.targets)}", f"device: {plan.device}",
             f"jobs from Snakemake's DAG of {where}; {plan.date}, commit {plan.commit or '?'}"
             + (" with uncommitted changes" if plan.dirty else "")]
    if plan.assumed_inputs:
        lines.append(f"inputs you provide, taken as present: {', '.join(plan.assumed_inputs)}")
    lines += ["", aligned(table(summary)) if not summary.rows.empty else "(no jobs to run)", "",
              "Hours from ([sources] and the number of jobs they time):"]
    lines += [f"  [{n}] {source}" for n, source in enumerate(summary.notes, start=1)]
    lines += [f"  * {line}" for line in plan.backbones]
    if plan.files:
        lines += ["", "Measurement files:"] + [f"  {path}: {why}" for path, why in plan.files.items()]
    lines += ["", "Totals"] + [f"  {what:<10}  {total}" + (f" ({of})" if of else "") for what, total, of in
                               totals(summary)]
    if summary.unknown_disk:
        unsized = ", ".join(f"{rule} ({n})" for rule, n in sorted(summary.unknown_disk.items()))
        lines += ["", f"Disk not estimated for: {unsized}; documents as JSONL, Lucene indexes, evaluations and "
                      f"tables are not sized at all."]
    if summary.unknown_downloads:
        lines += ["", "Downloads of unknown size: " + "; ".join(summary.unknown_downloads)]
    if summary.over_limit:
        lines += ["", f"{len(summary.over_limit)} jobs past the profile's limit at the measured rate, e.g. "
                      f"{summary.over_limit[0]}"]
    return "\n".join(lines) + "\n"


def as_json(plan: Plan) -> str:
    summary = summarise(plan)
    rows = summary.rows.to_dict(orient="records")
    for row in rows:
        row["unknown_disk_outputs"] = summary.unknown_disk.get(row["rule"], 0)
    return json.dumps({"config": plan.config, "targets": plan.targets, "device": plan.device,
                       "directory": plan.directory, "assumed_inputs": plan.assumed_inputs, "date": plan.date,
                       "commit": plan.commit, "dirty": plan.dirty, "rules": rows,
                       "sources": {str(n): s for n, s in enumerate(summary.notes, start=1)},
                       "other_backbones": plan.backbones, "measurement_files": plan.files,
                       "totals": summary.totals, "unknown_downloads": summary.unknown_downloads,
                       "over_limit": summary.over_limit}, indent=1, default=float) + "\n"


def markdown(plan: Plan, command: str) -> str:
    """The reproduction page's "What it costs" section body: totals, the table by rule, the sources."""
    summary = summarise(plan)
    assumed = (f" (with the inputs you provide taken as present: {', '.join(f'`{f}`' for f in plan.assumed_inputs)})"
               if plan.assumed_inputs else "")
    lines = [f"Planned on {plan.date} at commit {plan.commit or '?'}"
             + (" (with uncommitted changes)" if plan.dirty else "")
             + f" by `{command}`, for {plan.device}: every job of a fresh run directory, from Snakemake's DAG"
             + f"{assumed}.", "", "| | total | of which |", "| --- | ---: | --- |"]
    lines += [f"| {what} | {total} | {_escape(of)} |" for what, total, of in totals(summary)]
    rows = table(summary)
    lines += ["", "| " + " | ".join(rows.columns) + " |",
              "|" + "".join(" ---: |" if c in NUMBERS else " --- |" for c in rows.columns)]
    lines += ["| " + " | ".join(f"`{v}`" if c == "rule" else str(v) for c, v in row.items()) + " |"
              for row in rows.to_dict(orient="records")]
    lines += ["", "Where the hours come from:", ""]
    lines += [f"{n}. {_escape(source)}" for n, source in enumerate(summary.notes, start=1)]
    if plan.backbones:
        lines += [""] + [f"\\* {_escape(line)}" for line in plan.backbones]
    if plan.files:
        lines += ["", "Measurement files:", ""] + [f"- `{path}`: {_escape(why)}" for path, why in plan.files.items()]
    if summary.over_limit:
        lines += ["", f"{len(summary.over_limit)} jobs would pass the profile's time limit at the measured rate "
                      f"(e.g. {_escape(summary.over_limit[0])})."]
    return "\n".join(lines) + "\n"


def _escape(text: str) -> str:
    return text.replace("|", "\\|")
