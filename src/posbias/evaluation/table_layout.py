"""What a model table's layout declares (`posbias.evaluation.table_layouts`, one module per layout, found by its
file): its name (`tables.<name>.layout`), the schema of a table of that layout, the function that writes one, the
checks a table of that layout must pass beyond the schema, and whether a table that lists no models shows every
configured model. Its caption file for the Snakemake report is `report/<name>_table.rst`.

Every layout's writer takes one `posbias.evaluation.jobs.TableJob` (what a table's job reads, is told and writes;
`posbias.evaluation.report.model_table` calls it), and its check `(table, spec, cfg)`, raising
`posbias.errors.ConfigError` with a message naming `tables.<table>`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TableLayout:
    name: str
    description: str  # what its rows are, for the schema and the docs
    schema: Path  # a YAML file: the JSON schema of a table of this layout (`$ref`s into the config's `#/$defs/`)
    write: str  # "module:function" that writes the table's files
    check: str = ""  # "module:function" checking a table of this layout against the config
    every_model_by_default: bool = False  # a table without `models` shows every configured model
