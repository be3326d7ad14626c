"""The card's length-controlled table (`posbias.audit.card.length_table`) and a grid's depth-weighted means, from
the battery files `posbias audit` writes."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from posbias.audit import steps
from posbias.audit.battery_settings import settings_with
from posbias.audit.card import length_table
from posbias.audit.results import BatteryResult
from posbias.audit.spec import parse_model_spec
from planted_audit import Model


def with_lengths(battery: str):
    """A battery function giving a sweep on real text: 12 units of 300 tokens whose MRR falls by position, 3 of
    1200; a grid: the same at two lengths, with depths."""
    def run(model, settings):
        rng = np.random.default_rng(1)
        rows = []
        for length in ((40, 80) if battery == "grid" else (None,)):
            for unit, doc_length in enumerate([300] * 12 + [1200] * 3):
                for position in range(5):
                    row = {"unit": f"q{unit}", "position": position, "doc_length": doc_length,
                           "value": float(np.clip(1 - 0.15 * position + rng.normal(0, 0.05), 0, 1))}
                    if length:
                        row.update(length=length, depth=[0, 0.1, 0.5, 0.9, 1][position])
                    rows.append(row)
        extra = {"chance": 0.2, "doc_length_unit": "model tokens"}
        extra.update({"depths": [0, 0.1, 0.5, 0.9, 1]} if battery == "grid" else {"doc_tokens": 300})
        return BatteryResult(battery, "MRR", pd.DataFrame(rows), extra=extra)
    return run


def test_the_card_shows_each_length_bucket_beside_the_pooled_curve(tmp_path, monkeypatch):
    monkeypatch.setattr(steps, "battery_function", with_lengths)
    ref = parse_model_spec("cross-encoder:org/mini?name=mini")
    settings = settings_with({"statistics": {"n_resamples": 200}})
    records = [steps.run_battery(Model(), ref, battery, settings, tmp_path) for battery in ("sweep", "grid")]
    sweep, grid = (json.loads((tmp_path / "mini" / f"{b}.json").read_text()) for b in ("sweep", "grid"))
    assert [row["bucket"] for row in sweep["summary"]["by_length"]["buckets"]] == [
        "all", "(0, 512]", "(512, 1024]", "(1024, 1536]", "(1536, ∞)"]
    table = length_table(sweep)
    assert "<h3>By document length</h3>" in table and "document length (model tokens)" in table
    assert "(1024, 1536]" in table and "3 †" in table  # too few units: shown, marked
    assert "fewer than 10 units" in table and "arXiv 2601.08363" in table
    assert length_table(records[0] | {"summary": {}}) == ""  # the embedded world's: none
    # a grid: its lengths' table gains the depth-weighted mean beside the plain one, and its by-length table
    # pools each question at each length
    assert "mean_weighted" in grid["summary"]["lengths"]["80"]
    assert grid["summary"]["by_length"]["buckets"][0]["units"] == 30
    steps.write_reports(tmp_path)
    card = (tmp_path / "mini" / "card.html").read_text()
    assert card.count("<h3>By document length</h3>") == 2
    assert "mean over depths (depth-weighted)" in card and "mean over depths (unweighted)" in card
