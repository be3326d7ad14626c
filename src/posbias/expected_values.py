"""Writing a regression file's expected values back from one or more results directories (`posbias regress
--write-expected`, after a deliberate change; never run by the workflow): the cells, their tolerances and reasons
stay, and the file's comments are kept. Several directories (one run per seed) give each cell their mean and each
tolerance the pooled spread of one run's value, printed for the file's header (`posbias.regression` reads and
checks the file).
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import yaml

from posbias.errors import InputError
from posbias.io import atomic_write
from posbias.regression import Cell, Expectations, ResultTables, observe, parse_expectations, read_expectations

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_ .@/()+-]*")


def _yaml_scalar(value: Any) -> str:
    """One scalar as YAML flow text that PyYAML reads back as the same value."""
    if value is None:
        return "null"
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(float(f"{value:.10g}"))  # 10 digits: far below any tolerance, and short
        # YAML 1.1 (PyYAML) reads 1e-06 as text: a float needs a dot before its exponent
        mantissa, _, exponent = text.partition("e")
        return f"{mantissa}.0e{exponent}" if exponent and "." not in mantissa else text
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    text = str(value)
    # plain where YAML reads it back as this text (not yes, null, 1.5, ...), else JSON's quoting (valid YAML)
    if _PLAIN.fullmatch(text) and text == text.strip() and yaml.safe_load(text) == text:
        return text
    return json.dumps(text, ensure_ascii=False)


def _flow(mapping: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{_yaml_scalar(k)}: {_yaml_scalar(v)}" for k, v in mapping.items()) + "}"


def dump_expectations(expectations: Expectations) -> str:
    """The expectations as YAML: the original leading comments, then one line per tolerance and per cell."""
    lines = [expectations.header.rstrip("\n")] if expectations.header.strip() else []
    lines.append("tolerances:")
    for name, tol in expectations.tolerances.items():
        spec = {**({"abs": tol.abs} if tol.abs else {}), **({"rel": tol.rel} if tol.rel else {}),
                **({"why": tol.why} if tol.why else {})}
        lines.append(f"  {_yaml_scalar(name)}: {_flow(spec)}")
    lines.append("files:")
    for group in expectations.groups:
        lines.append(f"  {_yaml_scalar(group.name)}:")
        if group.about:
            lines.append(f"    about: {_yaml_scalar(group.about)}")
        lines.append(f"    path: {_yaml_scalar(group.path)}")
        lines.append(f"    keys: [{', '.join(_yaml_scalar(k) for k in group.keys)}]")
        lines.append(f"    value: {_yaml_scalar(group.value)}")
        lines.append("    cells:")
        for cell in group.cells:
            spec = {**cell.where, **({"value": cell.value} if cell.value_override else {}),
                    "expected": cell.expected, "tolerance": cell.tolerance,
                    **({"random": cell.random} if cell.random is not None else {})}
            lines.append(f"      - {_flow(spec)}")
    return "\n".join(lines) + "\n"


def _comparable(value: float | None) -> Any:
    return "nan" if value is not None and math.isnan(value) else value


def _observed_in_each(tables: Sequence[ResultTables], cell: Cell) -> tuple[list[float], str]:
    """The cell's value in each results directory, or why it cannot be taken from them all (a NaN in some only
    has no mean)."""
    observed = []
    for table in tables:
        value, note = observe(table, cell.path, cell.where, cell.value)
        if value is None:
            return [], note
        observed.append(value)
    if 0 < sum(math.isnan(v) for v in observed) < len(observed):
        return [], "undefined (NaN) in some results directories and not in others"
    return observed, ""


def refresh_expected(expected_path: str, results: str | os.PathLike | Sequence[str | os.PathLike], stream) -> int:
    """Replace every cell's expected value by the one in `results`, keeping cells, tolerances and reasons; a cell
    that cannot be read keeps its old value and is listed. Exit status 1 when any could not be read.

    Given several results directories (one per seed), a cell's expected value is their mean, and for each tolerance
    the pooled standard deviation of one seed's value over its cells is printed (the square root of the mean of the
    cells' sample variances): the s of the across-seeds band z x s x sqrt(1/k + 1/m) (config/regression/seeds.yaml).
    """
    expectations = read_expectations(expected_path)
    directories = [results] if isinstance(results, (str, os.PathLike)) else list(results)
    for directory in directories:
        if not Path(directory).is_dir():
            raise InputError(f"--results {directory}: no such directory")
    tables = [ResultTables(directory) for directory in directories]
    unread, changed, variances = [], 0, {}
    for cell in expectations.cells:
        observed, note = _observed_in_each(tables, cell)
        if note:
            unread.append(f"{cell.name}: {note}")
            continue
        old, mean = cell.expected, float(f"{np.mean(observed):.10g}")  # as the file keeps it (10 digits)
        changed += _comparable(old) != _comparable(mean)
        cell.expected = mean
        if len(observed) > 1 and not np.isnan(observed).any():
            variances.setdefault(cell.tolerance, []).append(float(np.var(observed, ddof=1)))
    text = dump_expectations(expectations)
    # the writer's own check, before the old file is replaced: the new one reads back to the same cells
    again = parse_expectations(text, expected_path)
    if [(c.name, _comparable(c.expected)) for c in again.cells] != [(c.name, _comparable(c.expected))
                                                                     for c in expectations.cells]:
        raise AssertionError(f"{expected_path}: the refreshed expectations do not read back as written")
    with atomic_write(expected_path) as out:
        out.write(text)
    source = (str(directories[0]) if len(directories) == 1
              else f"the mean of {len(directories)} results directories ({', '.join(map(str, directories))})")
    print(f"{expected_path}: {len(expectations.cells) - len(unread)} expected values read from {source} "
          f"({changed} changed)", file=stream)
    for name, values in variances.items():
        print(f"  tolerance {name}: pooled standard deviation of one run's value {math.sqrt(np.mean(values)):.4f} "
              f"over {len(values)} cells", file=stream)
    for line in unread:
        print(f"  kept the old value of {line}", file=stream)
    return 1 if unread else 0
