"""De-biased training (the study's Tables 2 and 3): each de-biased model under the same model trained on the
original documents, with its gain over it and a paired test against it."""

from __future__ import annotations

from pathlib import Path

from posbias.errors import ConfigError
from posbias.evaluation.table_layout import TableLayout


def check(table: str, spec: dict, cfg: dict) -> None:
    """Every model is a de-biased one (`models.<name>.debias` names the model it is compared with)."""
    for m in spec["models"]:
        if "debias" not in cfg["models"][m]:
            raise ConfigError(f"tables.{table}.models: {m!r} has no models.{m}.debias")


LAYOUTS = (TableLayout("debias", "de-biased models against the same models trained on original documents",
                       Path(__file__).with_suffix(".schema.yaml"), write="posbias.evaluation.report:debias_table",
                       check=f"{__name__}:check"),)
