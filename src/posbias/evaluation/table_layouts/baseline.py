"""Rankers against their FirstP baselines (the study's Tables 1, 5, 7 and 8): each model's gain over, and paired test
against, the baseline with its backbone."""

from __future__ import annotations

from pathlib import Path

from posbias.errors import ConfigError
from posbias.evaluation.table_layout import TableLayout


def check(table: str, spec: dict, cfg: dict) -> None:
    """Every model's baseline is a row of the table (its gains and tests are against it)."""
    for m in spec["models"]:
        baseline = cfg["models"][m]["baseline"]
        if baseline not in spec["models"]:
            raise ConfigError(f"tables.{table}.models: {m!r} needs its baseline {baseline!r} in the table")


LAYOUTS = (TableLayout("baseline", "rankers against their FirstP baselines", Path(__file__).with_suffix(".schema.yaml"),
                       write="posbias.evaluation.report:baseline_table", check=f"{__name__}:check",
                       every_model_by_default=True),)
