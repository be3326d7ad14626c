"""The regression check: numbers in a finished results directory against expected values kept in the repository.

The regression check (`posbias regress`, the last step of `make demo`) compares headline cells of the tables a run
wrote (their CSV files) with expected values kept in the repository (`config/regression/demo.yaml`), each with a
tolerance and one line on the evidence it rests on. It prints one pass/fail table, writes it as `regression.csv` and
`.md` into the results directory, and the command exits with status 1 when any cell fails. A cell whose file, row or
column is missing fails with a note naming them. `--write-expected` refreshes the expected values from a results
directory and keeps the cells, their tolerances and reasons (`posbias.expected_values`): for after a deliberate
change, never run by the workflow.

The expectations file:

    tolerances:                      # named tolerances: |observed - expected| <= abs + rel * |expected|
      exact: {abs: 1.0e-6, why: "deterministic: BM25 over a fixed collection"}
    files:
      table1:                        # a group: one CSV file, the columns that pick a row, the column read
        path: table1.csv             # relative to the results directory
        keys: [system, column]
        value: value
        cells:
          - {system: retriever, column: "dev RR@10", expected: 0.5875, tolerance: exact}

A cell's `value` overrides its group's; `expected: null` (or none) is a cell whose value has not been recorded yet
(it fails until `--write-expected` fills it); `.nan` expects an undefined value. A trained system's cell also gives
`random`: what a system ranking at random scores there (the random shuffle's row, the sweep's random MRR, chance),
and its band must exclude it: a cell whose tolerance around the expected value reaches the random level could not
tell a trained model from a random one, and the file is refused until the cell is dropped or its recipe
strengthened. Key values match a CSV field as
text, or as numbers when both read as numbers (`5` matches `5.0`).

The reproduction table, the same reading of a results directory set against published numbers, is
`posbias.reproduction`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd
import yaml

from posbias.errors import InputError
from posbias.io import atomic_write

PASS, FAIL = "pass", "FAIL"
COLUMNS = ["cell", "expected", "observed", "difference", "tolerance", "result", "note"]


# --- tolerances ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Tolerance:
    """|observed - expected| <= abs + rel * |expected| (numpy's `isclose` rule); NaN matches only NaN."""

    abs: float = 0.0
    rel: float = 0.0
    why: str = ""

    def bound(self, expected: float) -> float:
        return self.abs + self.rel * abs(expected)

    def allows(self, expected: float, observed: float) -> bool:
        if math.isnan(expected) or math.isnan(observed):
            return math.isnan(expected) and math.isnan(observed)
        # the bound is widened by a few ulps: a value typed in with as many digits as the tolerance holds, or
        # written as decimal text and read back, must not fail on the last bit of its binary rounding
        return abs(observed - expected) <= self.bound(expected) * (1 + 1e-9) + 1e-12

    def describe(self) -> str:
        parts = ([f"±{self.abs:g}"] if self.abs else []) + ([f"±{100 * self.rel:g}%"] if self.rel else [])
        return " + ".join(parts) or "exact"


def parse_tolerance(spec: Any, where: str) -> Tolerance:
    """A tolerance mapping (`abs`, `rel`, `why`); `where` names it in an error."""
    if not isinstance(spec, Mapping):
        raise InputError(f"{where}: must be a mapping with abs and/or rel, and why, got {spec!r}")
    unknown = sorted(set(spec) - {"abs", "rel", "why"})
    if unknown:
        raise InputError(f"{where}: unknown key {unknown[0]!r}; known: abs, rel, why")
    values = {}
    for key in ("abs", "rel"):
        value = spec.get(key, 0.0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or math.isinf(value):
            raise InputError(f"{where}.{key}: must be a finite number >= 0, got {value!r}")
        values[key] = float(value)
    if not values["abs"] and not values["rel"]:
        raise InputError(f"{where}: give abs or rel (a tolerance of exactly zero fails on the last bit of a float)")
    why = spec.get("why")
    if not isinstance(why, str) or not why.strip():
        raise InputError(f"{where}.why: required: one line on the evidence the tolerance rests on")
    return Tolerance(values["abs"], values["rel"], why.strip())


# --- the expectations file -----------------------------------------------------------------------------------------

@dataclass
class Cell:
    """One expected number: the row of `path` whose `keys` columns hold `where`, its column `value`."""

    group: str
    path: str
    where: dict[str, Any]
    value: str
    expected: float | None
    tolerance: str
    value_override: bool = False  # the cell names its own `value` column
    random: float | None = None  # a random system's value in this cell: the band must exclude it

    @property
    def name(self) -> str:
        keys = " / ".join(str(v) for v in self.where.values() if str(v) != "")  # an empty condition: none
        return f"{self.group}: {keys}" + (f" [{self.value}]" if self.value_override else "")


@dataclass
class Group:
    name: str
    path: str
    keys: list[str]
    value: str
    cells: list[Cell]
    about: str = ""


@dataclass
class Expectations:
    path: str
    header: str  # the file's leading comment lines, kept by --write-expected
    tolerances: dict[str, Tolerance]
    groups: list[Group]

    @property
    def cells(self) -> list[Cell]:
        return [cell for group in self.groups for cell in group.cells]


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: must be non-empty text, got {value!r}")
    return value


def _number(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: must be a number (or .nan, or null for not yet recorded), got {value!r}")
    return float(value)


def _key_value(value: Any, where: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(f"{where}: must be text or a number, got {value!r}")
    return value


def read_expectations(path: str | os.PathLike) -> Expectations:
    """The expectations file, checked; a problem is an `InputError` naming the file and the key."""
    path = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    return parse_expectations(text, path)


def parse_expectations(text: str, path: str) -> Expectations:
    """`read_expectations` of text; `path` names it in errors."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise InputError(f"{path}{line}: not valid YAML ({getattr(err, 'problem', None) or err})") from None
    if not isinstance(data, Mapping):
        raise InputError(f"{path}: must be a mapping with tolerances and files")
    unknown = sorted(set(data) - {"tolerances", "files"})
    if unknown:
        raise InputError(f"{path}: {unknown[0]}: unknown key; known: files, tolerances")
    tolerances = data.get("tolerances")
    if not isinstance(tolerances, Mapping) or not tolerances:
        raise InputError(f"{path}: tolerances: must be a non-empty mapping of named tolerances")
    parsed = {str(name): parse_tolerance(spec, f"{path}: tolerances.{name}") for name, spec in tolerances.items()}
    files = data.get("files")
    if not isinstance(files, Mapping) or not files:
        raise InputError(f"{path}: files: must be a non-empty mapping of groups (name -> path, keys, value, cells)")
    groups = [_group(path, str(name), spec, parsed) for name, spec in files.items()]
    header = "".join(line for line in _leading_comments(text))
    return Expectations(path, header, parsed, groups)


def _leading_comments(text: str) -> Iterable[str]:
    for line in text.splitlines(keepends=True):
        if not line.startswith("#") and line.strip():
            return
        yield line


GROUP_KEYS = {"path", "keys", "value", "cells", "about"}
CELL_KEYS = {"expected", "tolerance", "value", "random"}


def _group(path: str, name: str, spec: Any, tolerances: Mapping[str, Tolerance]) -> Group:
    where = f"{path}: files.{name}"
    if not isinstance(spec, Mapping):
        raise InputError(f"{where}: must be a mapping with path, keys, value and cells")
    unknown = sorted(set(spec) - GROUP_KEYS)
    if unknown:
        raise InputError(f"{where}.{unknown[0]}: unknown key; known: {', '.join(sorted(GROUP_KEYS))}")
    file = _text(spec.get("path"), f"{where}.path")
    if Path(file).is_absolute() or ".." in Path(file).parts:
        raise InputError(f"{where}.path: {file!r} must be relative to the results directory, inside it")
    keys = spec.get("keys")
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k for k in keys):
        raise InputError(f"{where}.keys: must be a non-empty list of CSV column names, got {keys!r}")
    if len(set(keys)) != len(keys) or set(keys) & CELL_KEYS:
        raise InputError(f"{where}.keys: {keys} repeats a column or uses a reserved name "
                         f"({', '.join(sorted(CELL_KEYS))})")
    value = _text(spec.get("value"), f"{where}.value")
    about = spec.get("about", "")
    if not isinstance(about, str):
        raise InputError(f"{where}.about: must be text")
    raw_cells = spec.get("cells")
    if not isinstance(raw_cells, list) or not raw_cells:
        raise InputError(f"{where}.cells: must be a non-empty list")
    cells, seen = [], {}
    for i, raw in enumerate(raw_cells):
        key = f"{where}.cells[{i}]"
        if not isinstance(raw, Mapping):
            raise InputError(f"{key}: must be a mapping of {', '.join(keys)}, expected and tolerance")
        unknown = sorted(set(raw) - set(keys) - CELL_KEYS)
        if unknown:
            raise InputError(f"{key}.{unknown[0]}: unknown key; known: {', '.join([*keys, *sorted(CELL_KEYS)])}")
        missing = [k for k in keys if k not in raw]
        if missing:
            raise InputError(f"{key}: no {missing[0]} (files.{name}.keys names the columns that pick a row)")
        if "tolerance" not in raw:
            raise InputError(f"{key}: no tolerance (one of {', '.join(tolerances)})")
        tolerance = raw["tolerance"]
        if tolerance not in tolerances:
            raise InputError(f"{key}.tolerance: {tolerance!r} is not one of tolerances: {', '.join(tolerances)}")
        cell = Cell(name, file, {k: _key_value(raw[k], f"{key}.{k}") for k in keys},
                    _text(raw.get("value", value), f"{key}.value"), _number(raw.get("expected"), f"{key}.expected"),
                    tolerance, value_override="value" in raw, random=_number(raw.get("random"), f"{key}.random"))
        _check_discriminates(cell, tolerances[tolerance], key)
        identity = (tuple(str(v) for v in cell.where.values()), cell.value)
        if identity in seen:
            raise InputError(f"{key}: the same cell as files.{name}.cells[{seen[identity]}]")
        seen[identity] = i
        cells.append(cell)
    return Group(name, file, list(keys), value, cells, about)


def _check_discriminates(cell: Cell, tolerance: Tolerance, key: str) -> None:
    """Refuse a cell whose band around its expected value reaches its random level (module docstring)."""
    if cell.random is None or cell.expected is None or math.isnan(cell.expected) or math.isnan(cell.random):
        return
    if tolerance.allows(cell.expected, cell.random):
        raise InputError(f"{key}: the band {tolerance.describe()} ({cell.tolerance}) around {cell.expected:.4g} "
                         f"reaches the random level {cell.random:.4g}: the cell cannot tell a trained model from a "
                         f"random one; drop it or strengthen its recipe (more queries, steps or seeds)")


# --- checking ------------------------------------------------------------------------------------------------------

def _same(field_text: str, wanted: Any) -> bool:
    """A CSV field (as text) against a key value: equal as text, or as numbers when both read as numbers."""
    if field_text == str(wanted):
        return True
    try:
        return float(field_text) == float(wanted)
    except (TypeError, ValueError):
        return False


class ResultTables:
    """CSV files of a results directory, read once each (as text: key columns compare as written)."""

    def __init__(self, results: str | os.PathLike):
        self.results = Path(results)
        self._frames: dict[str, pd.DataFrame | str] = {}

    def get(self, relative: str) -> pd.DataFrame | str:
        """The file's table, or a note saying why it cannot be read."""
        if relative not in self._frames:
            path = self.results / relative
            try:
                self._frames[relative] = pd.read_csv(path, dtype=str, keep_default_na=False)
            except FileNotFoundError:
                self._frames[relative] = f"no file {path}"
            except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
                self._frames[relative] = f"{path}: not a readable CSV table ({type(err).__name__})"
        return self._frames[relative]


def _float(text: str) -> float:
    """A CSV field as a number; an empty field is NaN (pandas writes NaN as nothing)."""
    return math.nan if text.strip() == "" else float(text)


def observe(tables: ResultTables, path: str, where: Mapping[str, Any], column: str,
            computed_only: bool = False) -> tuple[float | None, str]:
    """The number in `column` of the one row of `path` matching `where`, or (None, why not). `computed_only` skips
    rows typed in from elsewhere (a table's `published` rows)."""
    frame = tables.get(path)
    if isinstance(frame, str):
        return None, frame
    if computed_only and "published" in frame.columns:
        frame = frame[frame["published"].str.lower() != "true"]
    shown = tables.results / path
    absent = [c for c in [*where, column] if c not in frame.columns]
    if absent:
        return None, f"{shown} has no column {absent[0]!r}"
    mask = pd.Series(True, index=frame.index)
    for key, wanted in where.items():
        mask &= frame[key].map(lambda text, wanted=wanted: _same(text, wanted))
    rows = frame[mask]
    selector = ", ".join(f"{k}={v}" for k, v in where.items())
    if rows.empty:
        return None, f"{shown} has no row with {selector}"
    if len(rows) > 1:
        return None, f"{shown} has {len(rows)} rows with {selector} (the group's keys must pick one)"
    text = rows.iloc[0][column]
    try:
        return _float(text), ""
    except ValueError:
        return None, f"{shown}: {column} of the row with {selector} is {text!r}, not a number"


def check(expectations: Expectations, results: str | os.PathLike) -> pd.DataFrame:
    """One row per cell (COLUMNS): its expected and observed values, their difference, the tolerance, pass or FAIL,
    and a note saying why a cell failed without a comparison."""
    tables, rows = ResultTables(results), []
    for cell in expectations.cells:
        tolerance = expectations.tolerances[cell.tolerance]
        observed, note = observe(tables, cell.path, cell.where, cell.value)
        expected, difference, passed = cell.expected, None, False
        if expected is None:
            note = note or "no expected value recorded (posbias regress --write-expected)"
        elif observed is not None:
            difference = observed - expected
            passed = tolerance.allows(expected, observed)
            if not passed:
                note = ("one of expected and observed is undefined (NaN)" if math.isnan(difference)
                        else f"outside {tolerance.describe()} ({cell.tolerance})")
        rows.append({"cell": cell.name, "expected": expected, "observed": observed, "difference": difference,
                     "tolerance": f"{tolerance.describe()} ({cell.tolerance})", "result": PASS if passed else FAIL,
                     "note": note})
    # object columns: None (not recorded, not read) stays apart from NaN (an undefined value, which can pass)
    return pd.DataFrame(rows, columns=COLUMNS, dtype=object)


def _shown(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    if math.isnan(value):
        return "nan"
    return f"{value:+.6g}" if signed else f"{value:.6g}"


def _text_rows(frame: pd.DataFrame, numeric: dict[str, bool]) -> list[list[str]]:
    return [[_shown(row[c], numeric[c]) if c in numeric else str(row[c]) for c in frame.columns]
            for _, row in frame.iterrows()]


def aligned(frame: pd.DataFrame, numeric: dict[str, bool]) -> str:
    """The table as aligned text (numbers right-aligned, `-` for none); `numeric` maps the numeric columns to
    whether they are shown with a sign."""
    header = list(frame.columns)
    body = _text_rows(frame, numeric)
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if header[i] in numeric else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in body)])


def markdown(frame: pd.DataFrame, numeric: dict[str, bool], caption: str) -> str:
    from posbias.reporting.render import markdown_table

    return markdown_table(list(frame.columns), _text_rows(frame, numeric), caption)


CHECK_NUMERIC = {"expected": False, "observed": False, "difference": True}


def summary(frame: pd.DataFrame, expected_path: str, results: str | os.PathLike) -> str:
    failed = int((frame["result"] == FAIL).sum())
    return (f"Regression check of {results} against {expected_path}: {len(frame) - failed} of {len(frame)} cells "
            f"within tolerance" + (f", {failed} FAILED." if failed else "."))


def write_table(frame: pd.DataFrame, numeric: dict[str, bool], caption: str, csv_path: str | os.PathLike,
                md_path: str | os.PathLike) -> None:
    # an undefined value (NaN) is written "nan", apart from a value not recorded or not read (an empty field)
    undefined = frame.map(lambda v: isinstance(v, float) and math.isnan(v))
    with atomic_write(csv_path) as out:
        frame.mask(undefined, "nan").to_csv(out, index=False)
    with atomic_write(md_path) as out:
        out.write(markdown(frame, numeric, caption))


def run_check(expected_path: str, results: str | os.PathLike, stream) -> int:
    """Check, print the table and its summary to `stream`, write `regression.csv` and `.md` into `results`; the exit
    status: 1 when a cell fails, else 0."""
    expectations = read_expectations(expected_path)
    if not Path(results).is_dir():
        raise InputError(f"--results {results}: no such directory")
    frame = check(expectations, results)
    caption = summary(frame, expected_path, results)
    write_table(frame, CHECK_NUMERIC, caption, Path(results) / "regression.csv", Path(results) / "regression.md")
    print(aligned(frame, CHECK_NUMERIC), file=stream)
    print(caption, file=stream)
    return 1 if (frame["result"] == FAIL).any() else 0
