"""`posbias audit compare A B`: two audits of the same batteries on the same units compared paired, unit by unit,
with `posbias.stats.curve_comparison`: is B (a new version of a model, or A as a mitigation changes it) less
position-sensitive than A on the very same queries?

For each battery both audited (or those asked for), read from each audit's directory (`<out>/<name>/`, as
`posbias audit` writes it), under `--out`:

- `<battery>.positions.{csv,tex,md,html}`: per position A's and B's means, B - A with its bootstrap interval and
  the paired test of B against A, corrected across positions;
- `<battery>.summary.{csv,tex,md,html}`: PSI, PSI above chance and the best-worst gap of each, B - A with paired
  bootstrap intervals over units, and the Friedman test of whether the curves differ in shape;
- `comparison.html`: every battery's two tables on one page, each captioned with what the numbers say.

The statistics are A's battery settings (test, correction, confidence, resamples, seed), which must be B's too.
Refused with one line when the two audits measured other units or positions, another metric, or differ in their
statistics settings, and for a grid battery (its curves are per document length: compare them one length at a
time with the values files)."""

from __future__ import annotations

import html
import logging
import math
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from posbias.audit.battery_settings import DECLARED
from posbias.audit.results import RATIO_SCALE
from posbias.errors import InputError
from posbias.io import atomic_write, read_json
from posbias.outputs import table_files
from posbias.reporting.render import Table, html_page, number, write_tables
from posbias.stats.curve_comparison import (REACH_PERMUTATIONS, REACH_RESAMPLES, position_differences,
                                            reach_difference, shape_test, summary_differences)

log = logging.getLogger(__name__)

SUMMARY_LABELS = {"psi": "PSI", "psi_above_chance": "PSI above chance", "best_worst_gap": "best - worst",
                  "reach": "reach (position, 1 = first)"}


def audit_records(directory: Path) -> dict[str, dict]:
    """An audit directory's battery records by battery."""
    if not directory.is_dir():
        raise InputError(f"{directory}: not an audit directory (posbias audit writes <out>/<name>/)")
    records = {}
    for path in sorted(directory.glob("*.json")):
        record = read_json(path)
        if isinstance(record, dict) and record.get("battery") in DECLARED:
            records[record["battery"]] = record
    if not records:
        raise InputError(f"{directory}: no audit results in it")
    return records


def _checked_pair(battery: str, a: dict, b: dict) -> None:
    if DECLARED[battery].grid:
        raise InputError(f"--battery {battery}: a grid's curves are per document length; compare is for one curve")
    if a["metric"] != b["metric"]:
        raise InputError(f"{battery}: {a['name']} measured {a['metric']}, {b['name']} {b['metric']}")
    stats_a, stats_b = a["settings"]["statistics"], b["settings"]["statistics"]
    if stats_a != stats_b or a["test"] != b["test"]:
        raise InputError(f"{battery}: {a['name']} and {b['name']} were tested with other statistics settings "
                         f"({a['test']}, {stats_a} against {b['test']}, {stats_b})")


def compare_battery(dir_a: Path, dir_b: Path, a: dict, b: dict) -> dict:
    """Compare one battery of two audits: its two frames for the CSV files and its two tables."""
    battery = a["battery"]
    _checked_pair(battery, a, b)
    values_a = pd.read_parquet(dir_a / f"{battery}.parquet")
    values_b = pd.read_parquet(dir_b / f"{battery}.parquet")
    settings = a["settings"]["statistics"]
    resampling = dict(confidence=settings["confidence"], n_resamples=settings["n_resamples"], seed=settings["seed"])
    positions = position_differences(values_a, values_b, test=a["test"], correction=settings["correction"],
                                     what=(f"{battery} of {a['name']}", f"{battery} of {b['name']}"), **resampling)
    summary = summary_differences(values_a, values_b, chance=a.get("extra", {}).get("chance"),
                                  ratio_scale=a["metric"] in RATIO_SCALE, **resampling)
    reach = reach_difference(values_a, values_b, a["summary"]["reach"], b["summary"]["reach"], test=a["test"],
                             correction=settings["correction"], alpha=settings["alpha"],
                             confidence=settings["confidence"], seed=settings["seed"])
    # a reach where nothing dropped is a lower bound (the model may read further than the battery tested)
    reach.update(a_censored=bool(a["summary"].get("reach_censored")),
                 b_censored=bool(b["summary"].get("reach_censored")))
    summary = pd.concat([summary, pd.DataFrame([reach])], ignore_index=True)
    shape = shape_test(values_a, values_b)
    names = (a["name"], b["name"])
    return {"battery": battery, "positions": positions, "summary": _summary_frame(summary, shape),
            "tables": [_positions_table(battery, positions, names, a["metric"], settings),
                       _summary_table(battery, summary, shape, names, settings)]}


def _positions_table(battery: str, positions: pd.DataFrame, names: tuple[str, str], metric: str,
                     settings: dict) -> Table:
    a, b = names
    rows = [[str(r.position), number(r.mean_a), number(r.mean_b), number(r.difference),
             f"[{number(r.ci_low)}, {number(r.ci_high)}]", number(r.p_adjusted, 4)] for r in positions.itertuples()]
    significant = positions["p_adjusted"] < settings["alpha"]
    higher = _positions_text(positions[significant & (positions["difference"] > 0)]["position"])
    lower = _positions_text(positions[significant & (positions["difference"] < 0)]["position"])
    said = f"{b} is significantly higher than {a} at {higher}, lower at {lower}"
    caption = (f"{battery}: {metric} of {a} (A) and {b} (B) on the same {int(positions['n'].iloc[0])} units, B - A per "
               f"position with its {settings['confidence']:.0%} bootstrap interval and the paired test of B against "
               f"A, {settings['correction']}-corrected across positions. {said} (alpha {settings['alpha']}).")
    return Table(["position", f"{metric} A", f"{metric} B", "B - A", "interval", "p (corrected)"], rows, caption)


def _positions_text(positions: pd.Series) -> str:
    listed = ", ".join(map(str, positions))
    return "no position" if not len(positions) else f"position{'s' * (len(positions) > 1)} {listed}"


def _summary_frame(summary: pd.DataFrame, shape: dict) -> pd.DataFrame:
    shape_row = {"number": "shape (Friedman)", "a": math.nan, "b": math.nan, "difference": shape["statistic"],
                 "ci_low": math.nan, "ci_high": math.nan, "p": shape["p"]}
    return pd.concat([summary.assign(p=math.nan), pd.DataFrame([shape_row])], ignore_index=True)


def _summary_table(battery: str, summary: pd.DataFrame, shape: dict, names: tuple[str, str],
                   settings: dict) -> Table:
    a, b = names
    digits = {"reach": 0}  # a position

    def bound(censored) -> str:  # "≥": nothing dropped, so the reach is at least this (NaN: another number's row)
        return "≥ " if isinstance(censored, (bool, np.bool_)) and censored else ""

    rows = [[SUMMARY_LABELS[r.number], bound(getattr(r, "a_censored", None)) + number(r.a, digits.get(r.number, 3)),
             bound(getattr(r, "b_censored", None)) + number(r.b, digits.get(r.number, 3)),
             number(r.difference, digits.get(r.number, 3)),
             f"[{number(r.ci_low, digits.get(r.number, 3))}, {number(r.ci_high, digits.get(r.number, 3))}]"]
            for r in summary.itertuples()]
    numbers = summary.set_index("number")
    # PSI where the metric has a true zero; else (raw scores) the best-worst gap, in the metric's own units
    name = "psi" if not math.isnan(numbers.loc["psi", "ci_low"]) else "best_worst_gap"
    judged, label = numbers.loc[name], SUMMARY_LABELS[name]
    if math.isnan(judged["ci_low"]):
        verdict = f"no {label} interval could be drawn"
    elif judged["ci_high"] < 0:
        verdict = f"{b} is less position-sensitive than {a} (its {label} is lower, the interval below 0)"
    elif judged["ci_low"] > 0:
        verdict = f"{b} is more position-sensitive than {a} (its {label} is higher, the interval above 0)"
    else:
        verdict = f"the data do not tell whether {b} is more or less position-sensitive than {a} ({label})"
    shape_text = ("the shapes could not be tested (fewer than three positions, or the same difference everywhere)"
                  if math.isnan(shape["p"]) else
                  f"Friedman test of a change of shape across {shape['positions']} positions: "
                  f"chi2 = {shape['statistic']:.2f}, p = {shape['p']:.4g}")
    caption = (f"{battery}: the curves' summary numbers, B - A with {settings['confidence']:.0%} paired bootstrap "
               f"intervals over units ({settings['n_resamples']} resamples; the reach's {REACH_RESAMPLES}, each "
               f"testing both curves again; a randomisation test there takes {REACH_PERMUTATIONS} sign flips). "
               f"{verdict}; {shape_text}.")
    return Table(["", "A", "B", "B - A", "interval"], rows, caption)


def compare_audits(first: str | Path, second: str | Path, out: str | Path,
                   batteries: Sequence[str] | None = None) -> list[str]:
    """Compare audit directory `second` (B) with `first` (A), battery by battery, into `out`; returns the batteries
    compared."""
    dir_a, dir_b, out = Path(first), Path(second), Path(out)
    records_a, records_b = audit_records(dir_a), audit_records(dir_b)
    shared = [battery for battery in records_a if battery in records_b]
    chosen = list(batteries) if batteries else [b for b in shared if not DECLARED[b].grid]
    missing = [battery for battery in chosen if battery not in shared]
    if missing:
        raise InputError(f"--battery {missing[0]}: not audited in both {dir_a} ({', '.join(records_a)}) and {dir_b} "
                         f"({', '.join(records_b)})")
    if not chosen:
        raise InputError(f"{dir_a} and {dir_b} share no battery with one curve to compare")
    pages = [compare_battery(dir_a, dir_b, records_a[battery], records_b[battery]) for battery in chosen]
    out.mkdir(parents=True, exist_ok=True)  # only once every battery compared: a refusal writes nothing
    for page in pages:
        for kind, table in zip(("positions", "summary"), page["tables"]):
            write_tables(table_files(str(out), f"{page['battery']}.{kind}"), page[kind], table)
    heading = (f"<h1>{html.escape(records_b[chosen[0]]['name'])} (B) against "
               f"{html.escape(records_a[chosen[0]]['name'])} (A), unit by unit</h1>\n")
    with atomic_write(out / "comparison.html") as handle:
        handle.write(html_page(heading, *(table.html() for page in pages for table in page["tables"])))
    log.info("compared %s with %s on %s into %s", dir_b, dir_a, ", ".join(chosen), out)
    return chosen
