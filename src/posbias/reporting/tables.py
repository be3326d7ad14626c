"""Baseline-centred result tables (the layout of Tables 1, 4, 7 and 8), as LaTeX, Markdown, HTML and CSV.

A table is a list of rows (systems) and columns (query set + metric, and for
Table 4 a zero-shot or fine-tuned setting). A row may name the system its
relative gain is computed against, and systems it is tested against, each with a
superscript letter. Values are means of per-query values that were first
averaged over training seeds. Every test of a table is one family: its p-values
are adjusted together (`Significance.correction`), and a superscript is earned when
the adjusted p-value is below the column's threshold. A pair of systems compared in
both directions (Table 4: MaxP's b against PARADE Attn, PARADE Attn's a against MaxP)
is one test, counted once. A comparison whose queries all tie has no test (p is NaN,
`posbias.stats.paired`): its cell says "no test" with the letter, it earns no
superscript, and it is left out of the family and of the caption's count of tests.

A cell is found by its row's system and its column's identity (query set, metric, setting), never by
its label or header (a zero-shot and a fine-tuned column differ only in their setting). Readers see
only labels and headers, so a table refuses duplicates of either (`check_unique`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Hashable, Iterable, Mapping

import pandas as pd

from posbias.reporting.columns import ZERO_SHOT, column_header
from posbias.reporting.render import MISSING, NO_TEST, NOT_APPLICABLE, Cell, Table
from posbias.stats.corrections import adjust, describe
from posbias.stats.paired import align, paired_p_value



@dataclass(frozen=True)
class Column:
    queryset: str
    metric: str
    alpha: float
    header: str
    setting: str = ZERO_SHOT

    @property
    def identity(self) -> tuple[str, str, str]:
        """What selects the column's values; the header and threshold only present them."""
        return self.queryset, self.metric, self.setting


@dataclass(frozen=True)
class Row:
    system: str
    label: str
    gain_over: str | None = None
    tests: dict[str, str] = field(default_factory=dict)  # superscript letter -> reference system
    # A run made elsewhere may lack query sets (its cells show a dash) or queries (it is
    # compared with its references on the queries both have).
    external: bool = False
    # Settings the system has no values in by design (a zero-shot model is never fine-tuned): its cells there
    # read N/A, and no test involves them.
    not_applicable: frozenset[str] = frozenset()
    # Query sets the system does not rerank (`models.<name>.querysets`: the study ran RankGPT on neither MS MARCO
    # dev nor Robust04 titles): its cells there are a dash, and no test involves them.
    not_run: frozenset[str] = frozenset()
    # A published row (`reference_rows` of a table's config): its values typed in by column header, never computed
    # here, shown as they are and left out of every gain and test.
    published: Mapping[str, float] | None = None


@dataclass(frozen=True)
class Significance:
    """Which paired test the superscripts use, and the correction over a table's tests."""

    test: str = "t"
    correction: str = "none"
    permutations: int = 10000
    seed: int = 0

    @classmethod
    def from_config(cls, section: dict) -> "Significance":
        return cls(section["test"], section["correction"], section["permutations"], section["seed"])

    def name(self) -> str:
        return {"t": "two-sided paired t-test",
                "wilcoxon": "two-sided Wilcoxon signed-rank test",
                "randomisation": f"two-sided paired randomisation test ({self.permutations} permutations, "
                                 f"seed {self.seed})"}[self.test]


def _repeated(items: Iterable[Hashable]) -> list:
    """The items that occur more than once, each once, in order of first occurrence."""
    items = list(items)
    counts = Counter(items)
    return [item for item in dict.fromkeys(items) if counts[item] > 1]


def duplicate_headers(spec: dict) -> list[str]:
    """Headers shared by several columns of a table's config section (`columns`); for the config checks."""
    return _repeated(column_header(column) for column in spec["columns"])


def check_unique(name: str, rows: list[Row], columns: list[Column]) -> None:
    """Refuse a table whose readers could not tell two columns or two rows apart, or which tests a pair twice."""
    problems = [f"the header {h!r} names several columns" for h in _repeated(c.header for c in columns)]
    problems += [f"the column {q} {m} ({s}) appears more than once"
                 for q, m, s in _repeated(c.identity for c in columns)]
    problems += [f"the label {label!r} names several rows" for label in _repeated(r.label for r in rows)]
    problems += [f"the system {system!r} has several rows" for system in _repeated(r.system for r in rows)]
    if problems:
        raise ValueError(f"table {name}: " + "; ".join(problems))


def _series(per_query: pd.DataFrame, system: str, column: Column) -> pd.Series:
    selected = ((per_query["system"] == system) & (per_query["queryset"] == column.queryset)
                & (per_query["metric"] == column.metric))
    if "setting" in per_query:
        selected &= per_query["setting"] == column.setting
    return per_query[selected].set_index("qid")["value"]


def _required(per_query: pd.DataFrame, system: str, column: Column) -> pd.Series:
    values = _series(per_query, system, column)
    if values.empty:
        raise KeyError(f"no per-query values for system {system!r} on {column.queryset} ({column.metric}, "
                       f"{column.setting})")
    return values


def _paired(values: pd.Series, reference: pd.Series, external: bool) -> tuple[pd.Series, pd.Series]:
    if external:  # compare on the queries both have; ours must have the same queries (align checks)
        common = values.index.intersection(reference.index)
        values, reference = values.loc[common], reference.loc[common]
    x, y = align(values, reference)
    return pd.Series(x), pd.Series(y)


def build_table(per_query: pd.DataFrame, rows: list[Row], columns: list[Column],
                significance: Significance = Significance(), name: str = "unnamed") -> pd.DataFrame:
    """One record per (row, column): value, gain, raw and adjusted p-values, the superscripts earned.

    `name` (the table's label) is what an error about duplicate rows or columns names.
    """
    check_unique(name, rows, columns)
    records = []
    marks = []  # (record index, letter, test key)
    p_values: dict[tuple, float] = {}  # test key -> raw p; the key is the unordered pair of systems and the column
    inapplicable = {(row.system, setting) for row in rows for setting in row.not_applicable}
    not_run = {(row.system, queryset) for row in rows for queryset in row.not_run}
    for row in rows:
        for column in columns:
            if row.published is not None:
                value = row.published.get(column.header, math.nan)
                records.append({"system": row.system, "label": row.label, "queryset": column.queryset,
                                "metric": column.metric, "setting": column.setting, "column": column.header,
                                "alpha": column.alpha, "n_queries": 0, "value": float(value), "gain": math.nan,
                                "gain_over": "", "marks": "", "not_applicable": False, "published": True})
                continue
            absent = (row.system, column.queryset) in not_run
            if absent or (row.system, column.setting) in inapplicable:
                records.append({"system": row.system, "label": row.label, "queryset": column.queryset,
                                "metric": column.metric, "setting": column.setting, "column": column.header,
                                "alpha": column.alpha, "n_queries": 0, "value": math.nan, "gain": math.nan,
                                "gain_over": row.gain_over or "", "marks": "", "not_applicable": not absent})
                continue
            values = _series(per_query, row.system, column) if row.external else _required(per_query, row.system,
                                                                                            column)
            record = {"system": row.system, "label": row.label, "queryset": column.queryset,
                      "metric": column.metric, "setting": column.setting, "column": column.header,
                      "alpha": column.alpha, "n_queries": len(values),
                      "value": float(values.mean()) if len(values) else math.nan, "gain": math.nan,
                      "gain_over": row.gain_over or "", "marks": "", "not_applicable": False}
            records.append(record)
            if values.empty:
                continue
            if row.gain_over:
                x, y = _paired(values, _required(per_query, row.gain_over, column), row.external)
                record["gain"] = (x.mean() - y.mean()) / y.mean() if y.mean() else math.nan
            for letter, reference in row.tests.items():
                if (reference, column.setting) in inapplicable or (reference, column.queryset) in not_run:
                    continue
                record[f"vs_{letter}"] = reference
                key = (frozenset((row.system, reference)), column.identity)
                if key not in p_values:  # every test used here is symmetric in its two systems
                    x, y = _paired(values, _required(per_query, reference, column), row.external)
                    p_values[key] = paired_p_value(significance.test, x, y, significance.permutations,
                                                   significance.seed)
                marks.append((len(records) - 1, letter, key))
    adjusted = dict(zip(p_values, adjust(list(p_values.values()), significance.correction)))
    for index, letter, key in marks:
        record = records[index]
        record[f"p_{letter}"], record[f"p_adj_{letter}"] = p_values[key], float(adjusted[key])
        if math.isnan(p_values[key]):
            record["no_test"] = record.get("no_test", "") + letter
        elif adjusted[key] < record["alpha"]:
            record["marks"] += letter
    table = pd.DataFrame.from_records(records)
    if "published" in table:
        table["published"] = table["published"].fillna(False).astype(bool)
    # the family the correction ran over: a NaN p (every query tied) is no test
    table.attrs["n_tests"] = sum(not math.isnan(p) for p in p_values.values())
    table.attrs["n_no_test"] = len(p_values) - table.attrs["n_tests"]
    return table


def significance_note(table: pd.DataFrame, columns: list[Column], significance: Significance) -> str:
    """Caption text: the test, the correction over this table's tests, and each column's threshold."""
    thresholds = ", ".join(f"{c.header}: $p < {c.alpha}$" for c in columns)
    untested = table.attrs.get("n_no_test", 0)
    no_test = (f" ({NO_TEST} a): nothing to test against reference a, as every query ties with it (or, for the "
               f"t-test, the differences do not vary); {untested} comparison{'s' * (untested != 1)}, left out of the "
               f"count of tests and the correction." if untested else "")
    return (f"Tests: {significance.name()}; {describe(significance.correction, table.attrs.get('n_tests', 0))}; "
            f"thresholds {thresholds}.{no_test}")


def _percent(gain: float) -> str:
    return f"{100 * gain:+.1f}%"


def _cells(table: pd.DataFrame, columns: list[Column], row_header: str) -> tuple[list[str], list[list[str | Cell]]]:
    """Header and body cells, one body row per system in the table's order."""
    has_gain = table["gain"].notna().any()
    header = [row_header] + [c.header for c in columns] + (["Avg. gain"] if has_gain else [])
    body = []
    for _, part in table.groupby("system", sort=False):
        by_column = part.set_index(["queryset", "metric", "setting"])
        cells: list[str | Cell] = [part["label"].iloc[0]]
        for column in columns:
            record = by_column.loc[column.identity]
            if record["not_applicable"]:
                cells.append(NOT_APPLICABLE)
                continue
            if math.isnan(record["value"]):
                cells.append(MISSING)
                continue
            gain = "" if math.isnan(record["gain"]) else f" ({_percent(record['gain'])})"
            untested = record.get("no_test")
            untested = f" ({NO_TEST} {untested})" if isinstance(untested, str) and untested else ""
            cells.append(Cell(f"{record['value']:.3f}", superscript=record["marks"], after=gain + untested))
        if has_gain:
            gains = part["gain"].dropna()
            cells.append(_percent(gains.mean()) if not gains.empty else "-")
        body.append(cells)
    return header, body


def as_table(table: pd.DataFrame, columns: list[Column], caption: str, label: str = "",
             row_header: str = "Ranker") -> Table:
    """The printed table of a `build_table` frame."""
    return Table(*_cells(table, columns, row_header), caption, label)
