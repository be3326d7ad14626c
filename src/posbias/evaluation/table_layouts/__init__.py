"""Every model table layout's declaration (`posbias.evaluation.table_layout`), one module per layout with the schema
of its tables beside it (`<layout>.schema.yaml`). A module of this package that defines `LAYOUTS` is found by its
file (`posbias.plugins`): a new layout is its module, its schema and its caption file (`report/<layout>_table.rst`).
The order is the schema's `layout` enum and the order of `rule all`: the study's three below, then any other by its
module's name. Reading them imports nothing heavy (the config's check reads them in every command)."""

from __future__ import annotations

import yaml

from posbias.evaluation.table_layout import TableLayout
from posbias.plugins import declared

ESTABLISHED = ("baseline", "debias", "ablation")

LAYOUTS: dict[str, TableLayout] = {layout.name: layout for layout in declared(__name__, "LAYOUTS", ESTABLISHED)}


def schema_name(layout: str) -> str:
    """The `$defs` entry of a layout's table schema (`#/$defs/baseline_table`)."""
    return f"{layout}_table"


def with_layouts(schema: dict) -> dict:
    """`schema` (the parsed config schema) with each layout's table schema in `$defs`, and a table of any other name
    checked as the layout it declares."""
    for layout in LAYOUTS.values():
        schema["$defs"][schema_name(layout.name)] = yaml.safe_load(layout.schema.read_text(encoding="utf-8"))
    model_table = schema["properties"]["tables"]["additionalProperties"]
    described = "; ".join(f"{name}: {layout.description}" for name, layout in LAYOUTS.items())
    model_table["properties"]["layout"] = {"enum": list(LAYOUTS), "description": f"which layout it has ({described})"}
    model_table["allOf"] = [{"if": {"properties": {"layout": {"const": name}}},
                             "then": {"$ref": f"#/$defs/{schema_name(name)}"}} for name in LAYOUTS]
    return schema
