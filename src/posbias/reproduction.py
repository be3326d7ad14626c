"""The reproduction table (`posbias regress --reproduction --config config/paper/X.yaml`): a paper config's tables
beside the published numbers typed into that config's `reproduction` section (never into code): for each table, its
source, a tolerance and why, and `values: {system: {column header: number}}`. It writes `reproduction.csv` and `.md`
into the experiment's results directory and exits 0: outside the tolerance is a finding to report, not a failure of
the code. The results are read as the regression check reads them (`posbias.regression`).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Mapping

import pandas as pd

from posbias.errors import InputError
from posbias.regression import ResultTables, aligned, observe, parse_tolerance, write_table

WITHIN, OUTSIDE, NOT_COMPUTED = "yes", "no", "not computed"
REPRODUCTION_COLUMNS = ["table", "system", "column", "reproduced", "published", "difference", "tolerance",
                        "within_tolerance", "source", "note"]


def reproduction_table(section: Mapping[str, Mapping], results: str | os.PathLike) -> pd.DataFrame:
    """One row per published cell of a config's `reproduction` section (REPRODUCTION_COLUMNS): the reproduced value
    from `{results}/{table}.csv` (its computed row, never a published one), the published one, reproduced minus
    published, the tolerance and whether the difference is within it."""
    tables, rows = ResultTables(results), []
    for table, spec in section.items():
        tolerance = parse_tolerance(spec["tolerance"], f"reproduction.{table}.tolerance")
        for system, values in spec["values"].items():
            for column, published in values.items():
                reproduced, note = _reproduced(tables, f"{table}.csv", system, column)
                if reproduced is None:
                    within, difference = NOT_COMPUTED, None
                else:
                    difference = reproduced - published
                    within = WITHIN if tolerance.allows(float(published), reproduced) else OUTSIDE
                rows.append({"table": table, "system": system, "column": column, "reproduced": reproduced,
                             "published": float(published), "difference": difference,
                             "tolerance": tolerance.describe(), "within_tolerance": within,
                             "source": spec["source"], "note": note})
    return pd.DataFrame(rows, columns=REPRODUCTION_COLUMNS, dtype=object)


def _reproduced(tables: ResultTables, path: str, system: str, column: str) -> tuple[float | None, str]:
    # rows typed in from elsewhere (reference_rows, shown as published) are never a reproduction
    value, note = observe(tables, path, {"system": system, "column": column}, "value", computed_only=True)
    if value is not None and math.isnan(value):
        return None, f"{tables.results / path}: no value for {system} / {column} (not run)"
    return value, note


REPRODUCTION_NUMERIC = {"reproduced": False, "published": False, "difference": True}


def run_reproduction(config, results: str | os.PathLike | None, stream) -> int:
    """The reproduction table of a loaded config (`posbias.config.Config`), printed and written as
    `reproduction.csv` and `.md` into the results directory (the config's unless `results` is given)."""
    section = config.data.get("reproduction") or {}
    if not section:
        raise InputError("the config has no reproduction section (published numbers to compare with)")
    results = Path(results or config.results_dir)
    if not results.is_dir():
        raise InputError(f"--results {results}: no such directory (run the experiment first)")
    frame = reproduction_table(section, results)
    counts = frame["within_tolerance"].value_counts()
    sources = "; ".join(f"{t}: {s['source']}" for t, s in section.items())
    caption = (f"Reproduced ({results}) against published numbers ({sources}): {counts.get(WITHIN, 0)} of "
               f"{len(frame)} cells within tolerance, {counts.get(OUTSIDE, 0)} outside, "
               f"{counts.get(NOT_COMPUTED, 0)} not computed. Difference: reproduced minus published.")
    shown = frame.drop(columns=["source"])
    write_table(frame, REPRODUCTION_NUMERIC, caption, results / "reproduction.csv", results / "reproduction.md")
    print(aligned(shown, REPRODUCTION_NUMERIC), file=stream)
    print(caption, file=stream)
    return 0
