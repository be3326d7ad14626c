"""Baseline-centred result tables (the layout of Tables 1 and 4), as LaTeX, Markdown and CSV.

A table is a list of rows (systems) and columns (query set + metric). A row
may name the system its relative gain is computed against, and systems it is
tested against, each with a superscript letter. Values are means of per-query
values that were first averaged over training seeds; tests are two-sided
paired t-tests at the column's threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from posbias.stats.paired import paired_t_test


@dataclass(frozen=True)
class Column:
    queryset: str
    metric: str
    alpha: float
    header: str


@dataclass(frozen=True)
class Row:
    system: str
    label: str
    gain_over: str | None = None
    tests: dict[str, str] = field(default_factory=dict)  # superscript letter -> reference system


def _series(per_query: pd.DataFrame, system: str, column: Column) -> pd.Series:
    part = per_query[(per_query["system"] == system) & (per_query["queryset"] == column.queryset)
                     & (per_query["metric"] == column.metric)]
    if part.empty:
        raise KeyError(f"no per-query values for system {system!r} on {column.queryset} ({column.metric})")
    return part.set_index("qid")["value"]


def build_table(per_query: pd.DataFrame, rows: list[Row], columns: list[Column]) -> pd.DataFrame:
    """One record per (row, column): value, gain, p-values and the superscripts earned."""
    records = []
    for row in rows:
        for column in columns:
            values = _series(per_query, row.system, column)
            record = {"system": row.system, "label": row.label, "queryset": column.queryset,
                      "metric": column.metric, "column": column.header, "alpha": column.alpha,
                      "n_queries": len(values), "value": float(values.mean()), "gain": math.nan,
                      "gain_over": row.gain_over or "", "marks": ""}
            if row.gain_over:
                baseline = paired_t_test(values, _series(per_query, row.gain_over, column))
                record["gain"] = baseline.relative_gain
            for letter, reference in row.tests.items():
                result = paired_t_test(values, _series(per_query, reference, column))
                record[f"p_{letter}"] = result.p_value
                record[f"vs_{letter}"] = reference
                if result.p_value < column.alpha:
                    record["marks"] += letter
            records.append(record)
    return pd.DataFrame.from_records(records)


def _cells(table: pd.DataFrame, columns: list[Column], latex: bool) -> tuple[list[str], list[list[str]]]:
    has_gain = table["gain"].notna().any()
    header = ["Ranker"] + [c.header for c in columns] + (["Avg. gain"] if has_gain else [])
    body = []
    for label, part in table.groupby("label", sort=False):
        cells = [label]
        for column in columns:
            record = part[part["column"] == column.header].iloc[0]
            text = f"{record['value']:.3f}"
            if record["marks"]:
                text += f"$^{{{record['marks']}}}$" if latex else f"^{record['marks']}"
            if not math.isnan(record["gain"]):
                gain = f"{100 * record['gain']:+.1f}\\%" if latex else f"{100 * record['gain']:+.1f}%"
                text += f" ({gain})"
            cells.append(text)
        if has_gain:
            gains = part["gain"].dropna()
            if gains.empty:
                cells.append("-")
            else:
                cells.append(f"{100 * gains.mean():+.1f}\\%" if latex else f"{100 * gains.mean():+.1f}%")
        body.append(cells)
    return header, body


def _escape(text: str) -> str:
    return text.replace("_", r"\_").replace("&", r"\&").replace("%", r"\%") if "$" not in text else text


def to_latex(table: pd.DataFrame, columns: list[Column], caption: str, label: str) -> str:
    header, body = _cells(table, columns, latex=True)
    lines = [r"\begin{table}[t]", r"\centering", r"\small",
             r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}", r"\toprule",
             " & ".join(_escape(h) for h in header) + r" \\", r"\midrule"]
    lines += [" & ".join([_escape(cells[0]), *cells[1:]]) + r" \\" for cells in body]
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{caption}}}", rf"\label{{{label}}}",
              r"\end{table}", ""]
    return "\n".join(lines)


def to_markdown(table: pd.DataFrame, columns: list[Column], caption: str) -> str:
    header, body = _cells(table, columns, latex=False)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return "\n".join(lines) + f"\n\n{caption}\n"
