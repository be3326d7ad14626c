"""The audit's leaderboard (`leaderboard.{tex,csv,md,html}` under the audit's directory): a row per audited model and
battery (a grid's per length), the metric suite's summary numbers side by side, from the battery records the cards
read (`posbias.audit.card.read_records`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from posbias.audit.card import SUMMARY_FIELDS, reach_text
from posbias.outputs import table_files
from posbias.reporting.render import Table, number, write_tables

LEADERBOARD_COLUMNS = ["name", "kind", "battery", "metric", *(key for key, _ in SUMMARY_FIELDS), "n_units"]


def leaderboard_frame(found: Mapping[str, Sequence[Mapping]]) -> pd.DataFrame:
    rows = []
    for name, records in found.items():
        for record in records:
            # a grid: a row per length, the battery named with it
            each = record["summary"].get("lengths") or {None: record["summary"]}
            for length, summary in each.items():
                battery = record["battery"] + (f" @{length}" if length is not None else "")
                rows.append({"name": name, "kind": record["kind"], "battery": battery, "metric": record["metric"],
                             **{k: summary.get(k, math.nan) for k in LEADERBOARD_COLUMNS[4:-1]},
                             "n_units": record["n_units"]})
    return pd.DataFrame(rows, columns=LEADERBOARD_COLUMNS)


def write_leaderboard(found: Mapping[str, Sequence[Mapping]], outputs: Mapping[str, str]) -> None:
    frame = leaderboard_frame(found)
    header = ["Model", "Kind", "Battery", "Metric", "First", "PSI", "PSI above chance", "Worst drop", "Best-worst",
              "Primacy", "Recency", "Drops", "Detectable", "Reach (pos.)", "Reach (tokens)", "Reach / window"]
    body = [[r["name"], r["kind"], r["battery"], r["metric"], number(r["reference_mean"]), number(r["psi"]),
             number(r["psi_above_chance"]),
             number(r["worst_drop"]), number(r["best_worst_gap"]), number(r["primacy"]), number(r["recency"]),
             str(int(r["significant_drops"])) + ("*" if r["underpowered"] else ""), number(r["detectable_drop"]),
             reach_text(r), number(r["reach_tokens"], 0), number(r["reach_fraction"], 2)] for _, r in frame.iterrows()]
    caption = ("Position sensitivity of every audited model: per battery, the metric at the first position, PSI "
               "(1 - worst/best over positions: Zeng et al.'s Position Sensitivity Index, capped by the metric's "
               "chance floor, so compare it only between rows of the same metric and candidate count), PSI above "
               "chance ((best - worst) / (best - chance): compare this one across batteries, metrics and candidate "
               "counts; "
               "empty where the best position is at chance, so there is nothing to measure, or the scores are raw), "
               "the worst drop from the first position (relative), the best-worst "
               "gap, primacy and recency (first and last position minus the middle's mean), the number of positions "
               "significantly below the first (corrected paired tests; *: too few units for any to be), the smallest "
               "drop below the first those tests find with 80% power (in the metric's units: a curve without "
               "significant drops has none larger; empty: none is detectable), and the reach: "
               "the last position before the first significant drop (counted from 1; ≥: none dropped), and where the "
               "needle ends there, in the model's tokens and as a fraction of its window.")
    write_tables(dict(outputs), frame, Table(header, body, caption, "tab:audit-leaderboard", wide=True))


def leaderboard_files(out: str | Path) -> dict[str, str]:
    return table_files(str(out), "leaderboard")
