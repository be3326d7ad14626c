"""Shi et al.'s released judgments, converted once into records files, and the reproduction tables:

- the figures the authors' pipeline printed (typed into `config/reference/judging_the_judges.yaml`, `printed`, as
  labelled reference rows) against the same figures recomputed here from the records, beside the metrics of
  `posbias.judges.metrics`;
- every judge's position consistency and preference fairness on each benchmark's position-bias set, aggregated
  as the authors aggregate them for the paper's tables (`posbias.judges.cell_averages`), beside the paper's own
  figures where they are typed into the same file (`paper`: none are yet; see there).

    posbias judges convert RELEASE OUT    # the release's judgment_data/ as records files, one per benchmark and set
    posbias judges reproduce [--records DIR] [--reference FILE] --out results/judges/reproduction

The converted files ship in the package (`posbias/judges/released/`, with their provenance in its README), so
the table is made without the release; `convert` remakes them from a checkout of the release.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from pathlib import Path

from posbias.errors import InputError
from posbias.judges import cell_averages, metrics, release
from posbias.judges.records import Judgment, judgments_by_judge, write_judgments

log = logging.getLogger(__name__)

RELEASED = Path(__file__).with_name("released")
REFERENCE = Path("config") / "reference" / "judging_the_judges.yaml"  # under the workflow's root (posbias.workflow)
COLUMNS = ("benchmark", "set", "judge", "repetition", "printed", "reproduced", "match", "position_consistency",
           "pc_low", "pc_high", "preference_fairness", "pf_low", "pf_high", "order_kappa", "repetition_stability")
AVERAGE_COLUMNS = ("benchmark", *cell_averages.COLUMNS, "paper_position_consistency", "paper_preference_fairness",
                   "paper_rounding", "paper_source", "pc_within_rounding", "pf_within_rounding")
PAPER_KEYS = ("benchmark", "judge", "position_consistency", "preference_fairness", "rounding", "source")
BENCHMARKS = tuple(release.REFERENCE)


def records_name(benchmark: str, judgment_set: str) -> str:
    return f"{benchmark.lower()}-{judgment_set.replace('_', '-')}.jsonl.gz"


def convert(release_dir: str | Path, out: str | Path) -> tuple[dict[str, int], list[str]]:
    """Every run of the release as records files under `out` (one per benchmark and set, every judge and
    repetition in it): the judgments written per file, and the runs whose answers the copy lacks (skipped, each
    logged: a checkout without its large files)."""
    grouped: dict = defaultdict(list)
    missing = []
    tasks: dict = {}
    for run in release.runs(release_dir):
        if not release.has_answers(run):
            log.warning("%s: no answers in this copy of the release (record_*.tsv and tmp.pkl absent); skipped",
                        run.directory)
            missing.append(run.directory.name)
            continue
        if run.benchmark not in tasks:
            tasks[run.benchmark] = release.question_tasks(release_dir, run.benchmark)
        grouped[records_name(run.benchmark, run.set)].extend(release.judgments(run, tasks[run.benchmark]))
    Path(out).mkdir(parents=True, exist_ok=True)
    return {name: write_judgments(Path(out) / name, found) for name, found in sorted(grouped.items())}, missing


def printed_figures(release_dir: str | Path) -> list[dict]:
    """What each run's log printed: the reference rows of the config (`consistent` of `read` answers)."""
    rows = []
    for run in release.runs(release_dir):
        printed = release.printed_consistency(run)
        if printed:
            rows.append({"benchmark": run.benchmark, "set": run.set, "judge": run.judge,
                         "repetition": run.repetition, "consistent": printed[0], "read": printed[1]})
    return rows


def _records(records_dir: str | Path, benchmark: str, judgment_set: str) -> dict[str, list[Judgment]]:
    path = Path(records_dir) / records_name(benchmark, judgment_set)
    if not path.exists():
        raise InputError(f"{path}: no records file for {benchmark} {judgment_set} (posbias judges convert)")
    return judgments_by_judge(path)


def _reference(path: str | Path) -> dict:
    import yaml

    try:
        loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise InputError(f"{path}: not YAML ({str(err).splitlines()[0]})") from None
    return loaded if isinstance(loaded, dict) else {}


def _reference_rows(path: str | Path) -> list[dict]:
    rows = _reference(path).get("printed")
    if not isinstance(rows, list) or not rows:
        raise InputError(f"{path}: expected a list `printed` of the release's printed figures")
    for index, row in enumerate(rows):
        missing = {"benchmark", "set", "judge", "repetition", "consistent", "read"} - set(row or {})
        if missing:
            raise InputError(f"{path}: printed[{index}] lacks {', '.join(sorted(missing))}")
    return rows


def reproduction_rows(records_dir: str | Path, reference: str | Path,
                      n_resamples: int = 1000, seed: int = 0) -> list[dict]:
    """One row per printed figure: printed against reproduced (consistent answers of read answers, as the authors'
    pipeline counts them: `release.released_consistent_answers`), and the run's PC, PF (with intervals over
    questions), order kappa, and for a repetition set, the judge's repetition stability over its three runs."""
    cache: dict = {}

    def judged(benchmark: str, judgment_set: str, judge: str) -> list[Judgment] | None:
        if (benchmark, judgment_set) not in cache:
            cache[(benchmark, judgment_set)] = _records(records_dir, benchmark, judgment_set)
        return cache[(benchmark, judgment_set)].get(judge)

    rows = []
    for row in _reference_rows(reference):
        printed = f"{row['consistent']}/{row['read']} ({100 * row['consistent'] / row['read']:.2f}%)"
        shown = {"benchmark": row["benchmark"], "set": row["set"], "judge": row["judge"],
                 "repetition": row["repetition"] + 1, "printed": printed}
        everything = judged(row["benchmark"], row["set"], row["judge"])
        if everything is None:
            rows.append({**shown, "reproduced": "judgments not in the release's stored copy", "match": None})
            continue
        found = [judgment for judgment in everything if judgment.repetition == row["repetition"]]
        consistent, read = release.released_consistent_answers(found)
        summary = metrics.judge_summary(found, n_resamples=n_resamples, seed=seed)
        rows.append({
            **shown, "reproduced": f"{consistent}/{read} ({100 * consistent / read:.2f}%)" if read else "none read",
            "match": (consistent, read) == (row["consistent"], row["read"]),
            "position_consistency": summary["position_consistency"],
            "pc_low": summary["position_consistency_interval"][0],
            "pc_high": summary["position_consistency_interval"][1],
            "preference_fairness": summary["preference_fairness"],
            "pf_low": summary["preference_fairness_interval"][0], "pf_high": summary["preference_fairness_interval"][1],
            "order_kappa": summary["order_kappa"],
            "repetition_stability": metrics.repetition_stability(everything) if row["set"] == "repetition" else None,
        })
    return rows


def _paper_rows(path: str | Path) -> list[dict]:
    """The paper's own figures typed into the reference file's `paper` list (none is no error: the list is empty
    until someone types them from the paper); a malformed row is one error naming it."""
    rows = _reference(path).get("paper") or []
    if not isinstance(rows, list):
        raise InputError(f"{path}: `paper` must be a list of rows ({', '.join(PAPER_KEYS)})")
    seen = set()
    for index, row in enumerate(rows):
        where = f"{path}: paper[{index}]"
        if not isinstance(row, dict):
            raise InputError(f"{where} must be a mapping of {', '.join(PAPER_KEYS)}")
        unknown = set(row) - set(PAPER_KEYS)
        if unknown:
            raise InputError(f"{where} has unknown keys {', '.join(sorted(map(str, unknown)))} "
                             f"(known: {', '.join(PAPER_KEYS)})")
        missing = {"benchmark", "judge", "rounding", "source"} - set(row)
        if missing:
            raise InputError(f"{where} lacks {', '.join(sorted(missing))}")
        if row["benchmark"] not in BENCHMARKS:
            raise InputError(f"{where}.benchmark {row['benchmark']!r} is not one of {', '.join(BENCHMARKS)}")
        for key in ("judge", "source"):
            if not isinstance(row[key], str) or not row[key].strip():
                raise InputError(f"{where}.{key} must be a non-empty string")
        if not _finite_number(row["rounding"]) or not 0 < row["rounding"] < 1:
            raise InputError(f"{where}.rounding must be the figures' last digit's step, e.g. 0.01")
        figures = [key for key in ("position_consistency", "preference_fairness") if row.get(key) is not None]
        if not figures:
            raise InputError(f"{where} gives neither position_consistency nor preference_fairness")
        for key in figures:
            if not _finite_number(row[key]):
                raise InputError(f"{where}.{key} must be a number (or left out)")
        if (row["benchmark"], row["judge"]) in seen:
            raise InputError(f"{where} repeats {row['benchmark']} {row['judge']}")
        seen.add((row["benchmark"], row["judge"]))
    return rows


def _finite_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def cell_average_rows(records_dir: str | Path, reference: str | Path) -> list[dict]:
    """Every judge of each benchmark's position-bias set, aggregated as the authors aggregate for the paper
    (`cell_averages`), with the paper's figure beside it where the reference file's `paper` list has one; a paper
    row for a judge whose judgments the records lack is a row without ours."""
    paper = {(row["benchmark"], row["judge"]): row for row in _paper_rows(reference)}
    rows = []
    for benchmark in BENCHMARKS:
        judged = [judgment for found in _records(records_dir, benchmark, "position_bias").values()
                  for judgment in found]
        ours = {row["judge"]: row for row in cell_averages.judge_cell_averages(judged)}
        for judge in sorted(set(ours) | {name for bench, name in paper if bench == benchmark}):
            row = {"benchmark": benchmark, "judge": judge, **ours.get(judge, {})}
            typed = paper.get((benchmark, judge))
            if typed:
                row.update(paper_position_consistency=typed.get("position_consistency"),
                           paper_preference_fairness=typed.get("preference_fairness"),
                           paper_rounding=typed["rounding"], paper_source=typed["source"])
                for ours_key, theirs_key, within in (
                        ("position_consistency", "paper_position_consistency", "pc_within_rounding"),
                        ("preference_fairness", "paper_preference_fairness", "pf_within_rounding")):
                    if row.get(ours_key) is not None and row[theirs_key] is not None:
                        # a figure rounded to a step is within half a step of the value (plus float slack)
                        row[within] = abs(round(row[ours_key] - row[theirs_key], 12)) <= typed["rounding"] / 2
            rows.append(row)
    return rows


def write_reproduction(rows: list[dict], out: str | Path, averages: list[dict] | None = None) -> list[Path]:
    """`out`.csv (every printed figure's number), `out`.averages.csv (the authors' aggregation, with the paper's
    figures where typed) and `out`.md (both tables as a page shows them)."""
    import pandas as pd

    from posbias.io import atomic_write

    frame = pd.DataFrame(rows, columns=COLUMNS)
    csv_path, md_path = Path(f"{out}.csv"), Path(f"{out}.md")
    averages_path = Path(f"{out}.averages.csv")
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(csv_path) as handle:
        frame.to_csv(handle, index=False)
    averaged = pd.DataFrame(averages or [], columns=AVERAGE_COLUMNS).astype({"n_pairs": "Int64", "n_cells": "Int64"})
    with atomic_write(averages_path) as handle:
        averaged.to_csv(handle, index=False)
    shown = frame.copy()
    for column in ("position_consistency", "preference_fairness", "order_kappa", "repetition_stability"):
        shown[column] = shown[column].map(_number)
    shown["PC [95% CI]"] = [_with_interval(*values) for values in
                            zip(frame["position_consistency"], frame["pc_low"], frame["pc_high"])]
    shown["PF [95% CI]"] = [_with_interval(*values) for values in
                            zip(frame["preference_fairness"], frame["pf_low"], frame["pf_high"])]
    shown["match"] = shown["match"].map({True: "yes", False: "**no**"}).fillna("")
    table = shown[["benchmark", "set", "judge", "repetition", "printed", "reproduced", "match", "PC [95% CI]",
                   "PF [95% CI]", "order_kappa", "repetition_stability"]]
    matched = int((frame["match"] == True).sum())  # noqa: E712 (None: not reproducible here)
    checked = int(frame["match"].notna().sum())
    lines = [
        "# Judging the Judges: the released judgments reproduced",
        "",
        f"{matched} of the {checked} figures that the released judgments let us recompute, of {len(frame)} the "
        "authors' pipeline printed (consistent answers of the answers read, "
        "in each run's log.txt; reference rows typed into config/reference/judging_the_judges.yaml) are reproduced "
        "exactly from the released judgments (posbias/judges/released/). PC and PF are Shi et al.'s position "
        "consistency and preference fairness over choice pairs (posbias.judges.metrics), with percentile bootstrap "
        "intervals over questions; order kappa is Cohen's kappa between the two orders; repetition stability is "
        "the judge's over the set's three runs.",
        "",
        table.to_markdown(index=False),
        "",
        *_averages_section(averaged),
    ]
    with atomic_write(md_path) as handle:
        handle.write("\n".join(lines))
    return [csv_path, averages_path, md_path]


def _averages_section(averaged) -> list[str]:
    import pandas as pd

    if averaged.empty:
        return []
    typed = averaged["paper_source"].notna()
    shown = averaged[["benchmark", "judge"]].copy()
    shown["PC (std)"] = [f"{value:.3f} ({spread:.3f})" if value == value else "" for value, spread in
                         zip(averaged["position_consistency"], averaged["position_consistency_std"])]
    shown["PF (std)"] = [f"{value:.3f} ({spread:.3f})" if value == value else "" for value, spread in
                         zip(averaged["preference_fairness"], averaged["preference_fairness_std"])]
    shown["extraction"] = averaged["extraction_rate"].map(_number)
    shown["pairs"] = ["" if pd.isna(value) else f"{int(value)}" for value in averaged["n_pairs"]]
    verdict = {True: "yes", False: "**no**"}
    shown["paper PC"] = [_paper_figure(value, within, verdict) for value, within in
                         zip(averaged["paper_position_consistency"], averaged["pc_within_rounding"])]
    shown["paper PF"] = [_paper_figure(value, within, verdict) for value, within in
                         zip(averaged["paper_preference_fairness"], averaged["pf_within_rounding"])]
    if typed.any():
        compared = averaged[["pc_within_rounding", "pf_within_rounding"]].stack().dropna()
        within = int((compared == True).sum())  # noqa: E712 (a column of objects: True, False, None)
        figures = int(averaged[["paper_position_consistency", "paper_preference_fairness"]].notna().sum().sum())
        status = (f"{within} of the {len(compared)} paper figures that the released "
                  f"judgments let us recompute, of {figures} typed in (`paper` in "
                  f"config/reference/judging_the_judges.yaml, with their sources), are reproduced within their "
                  f"rounding.")
    else:
        status = ("The paper's own figures are not typed in yet (`paper` in config/reference/judging_the_judges.yaml "
                  "is empty: its tables were not reachable where this table was made), so the paper columns are "
                  "empty.")
    return [
        "## Every judge as the paper aggregates it (position-bias sets)",
        "",
        "Position consistency pooled over the judge's comparisons, preference fairness the mean over (subject, task) "
        "cells of the recency-minus-primacy score rescaled per cell, each with its standard deviation over the "
        "cells, and the share of verdicts read: the aggregation of the authors' released analysis "
        "(posbias.judges.cell_averages), which makes the figures of the paper's tables. " + status,
        "",
        shown.to_markdown(index=False),
        "",
    ]


def _paper_figure(value, within, verdict) -> str:
    if value is None or value != value:
        return ""
    return f"{value:g}" + (f" ({verdict[bool(within)]})" if within == within and within is not None else "")


def _number(value) -> str:
    return "" if value is None or value != value else f"{value:.3f}"


def _with_interval(value, low, high) -> str:
    if value is None or value != value:
        return ""
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"
