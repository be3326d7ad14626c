"""posbias.evaluation.table_layouts: a model table layout is one declaration module with its schema beside it; the
schema's enum, the schema of each layout's tables, the config checks and the writer all come from it."""

import inspect
from pathlib import Path

import pytest
import yaml

from posbias.config import ConfigError, load_config, schema
from posbias.evaluation import report
from posbias.evaluation.table_layouts import LAYOUTS
from posbias.plugins import load

ROOT = Path(__file__).resolve().parents[2]


def test_the_study_layouts_come_first_and_each_loads_its_writer_and_check():
    assert list(LAYOUTS)[:3] == ["baseline", "debias", "ablation"]
    assert list(inspect.signature(report.model_table).parameters) == ["job"]  # a TableJob
    for name, layout in LAYOUTS.items():
        assert list(inspect.signature(load(layout.write)).parameters) == ["job"], name
        if layout.check:
            assert list(inspect.signature(load(layout.check)).parameters) == ["table", "spec", "cfg"], name


def test_the_schema_takes_each_layouts_table_schema_and_its_name():
    assembled = schema()
    model_table = assembled["properties"]["tables"]["additionalProperties"]
    assert model_table["properties"]["layout"]["enum"] == list(LAYOUTS)
    assert [rule["then"]["$ref"] for rule in model_table["allOf"]] == [f"#/$defs/{n}_table" for n in LAYOUTS]
    for name, layout in LAYOUTS.items():
        assert assembled["$defs"][f"{name}_table"] == yaml.safe_load(layout.schema.read_text())
        assert assembled["$defs"][f"{name}_table"]["properties"]["layout"]["const"] == name


def write_layer(tmp_path: Path, tables: dict) -> Path:
    layer = tmp_path / "layer.yaml"
    layer.write_text(yaml.safe_dump({"tables": tables}))
    return layer


def test_a_layout_nobody_declared_is_refused_by_the_schema(tmp_path):
    layer = write_layer(tmp_path, {"mine": {"layout": "sideways", "columns": [{"queryset": "dev", "metric": "RR@10"}]}})
    with pytest.raises(ConfigError, match="tables.mine.layout"):
        load_config(ROOT / "config" / "test" / "tiny.yaml", layer)


def test_each_layouts_own_check_runs_on_its_tables(tmp_path):
    columns = [{"queryset": "dev", "metric": "RR@10"}]
    tiny = ROOT / "config" / "test" / "tiny.yaml"
    with pytest.raises(ConfigError, match="'maxp' needs its baseline 'firstp' in the table"):
        load_config(tiny, write_layer(tmp_path, {"mine": {"layout": "baseline", "models": ["maxp"], "columns": columns}}))
    with pytest.raises(ConfigError, match="'maxp' has no models.maxp.debias"):
        load_config(tiny, write_layer(tmp_path, {"mine": {"layout": "debias", "models": ["maxp"], "columns": columns}}))
    with pytest.raises(ConfigError, match=r"tables.mine.reference: 'sump' is not among tables.mine.models"):
        load_config(tiny, write_layer(tmp_path, {"mine": {"layout": "ablation", "models": ["firstp", "maxp"],
                                                          "reference": "sump", "columns": columns}}))
    assert load_config(tiny, write_layer(tmp_path, {"mine": {"layout": "baseline", "columns": columns}})
                       ).tables.by_layout()[:2] == ["mine", "table1"]
