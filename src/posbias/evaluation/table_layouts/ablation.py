"""Variants of one model against one of them (the study's Table 6: PARADE Attn with 1 to 6 chunks)."""

from __future__ import annotations

from pathlib import Path

from posbias.errors import ConfigError
from posbias.evaluation.table_layout import TableLayout


def check(table: str, spec: dict, cfg: dict) -> None:
    """The reference is one of the variants."""
    if spec["reference"] not in spec["models"]:
        raise ConfigError(f"tables.{table}.reference: {spec['reference']!r} is not among tables.{table}.models")


LAYOUTS = (TableLayout("ablation", "variants of one model against one of them",
                       Path(__file__).with_suffix(".schema.yaml"), write="posbias.evaluation.report:ablation_table",
                       check=f"{__name__}:check"),)
