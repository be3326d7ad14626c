"""Dataset statistics tables (Tables 9 and 10), as LaTeX (booktabs), Markdown and HTML.

Input is what `posbias.data.statistics` writes, one statistics dict per collection or query set.
Unlike the result tables there are no tests or gains: a cell is a compact count ("3.2M"), an
average with one decimal, or a label.
"""

from __future__ import annotations

import pandas as pd

from posbias.reporting.render import Table

DOCUMENT_FIELDS = ["n_documents", "avg_tokens", "sampled"]
QUERY_FIELDS = ["n_queries", "avg_tokens", "avg_positive_judgments"]


def compact_count(n: int) -> str:
    """A count as a table shows it: in full below 10,000, else in K or M, one decimal below 100 of the unit.

    12_000_000 -> "12M", 3_213_835 -> "3.2M", 352_000 -> "352K", 5193 -> "5193".
    """
    n = int(n)
    if n < 0:
        raise ValueError(f"a count cannot be negative, got {n}")
    if n < 10_000:
        return str(n)
    for unit, suffix in ((1_000, "K"), (1_000_000, "M")):
        value = n / unit
        text = f"{value:.1f}".removesuffix(".0") if value < 100 else f"{value:.0f}"
        # Rounding may reach the next unit (999_960 -> "1000K"), which reads better as "1M".
        if float(text) < 1000 or suffix == "M":
            return text + suffix
    raise AssertionError("unreachable")


def _table(stats: dict[str, dict], key: str, fields: list[str], labels: dict[str, str] | None) -> pd.DataFrame:
    labels = labels or {}
    records = [{key: name, "label": labels.get(name, name), **{f: values[f] for f in fields}}
               for name, values in stats.items()]
    return pd.DataFrame.from_records(records, columns=[key, "label", *fields])


def documents_table(stats: dict[str, dict], labels: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per collection: collection, label, n_documents, avg_tokens, sampled."""
    return _table(stats, "collection", DOCUMENT_FIELDS, labels)


def queries_table(stats: dict[str, dict], labels: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per query set: queryset, label, n_queries, avg_tokens, avg_positive_judgments."""
    return _table(stats, "queryset", QUERY_FIELDS, labels)


def _cells(frame: pd.DataFrame, columns: list[tuple[str, str]]) -> list[list[str]]:
    """The body's cells as plain text (each format escapes them); a column's dtype decides its format
    (integer: count, float: average, else text)."""
    formats = []
    for name, _ in columns:
        if pd.api.types.is_integer_dtype(frame[name]):
            formats.append(compact_count)
        elif pd.api.types.is_float_dtype(frame[name]):
            formats.append(lambda value: f"{value:.1f}")
        else:
            formats.append(str)
    return [[fmt(value) for fmt, value in zip(formats, row)]
            for row in frame[[name for name, _ in columns]].itertuples(index=False)]


def _header(columns: list[tuple[str, str]]) -> list[str]:
    return [header for _, header in columns]


def as_table(frame: pd.DataFrame, columns: list[tuple[str, str]], caption: str, label: str) -> Table:
    """The table of `columns` ([(frame column, header)]), the first column being the label."""
    return Table(_header(columns), _cells(frame, columns), caption, label)
