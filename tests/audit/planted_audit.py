"""An audit written as `posbias audit` writes it, by the audit's own `run_battery`, from planted values: what the
export tests (test_hub_export.py, test_mteb_export.py) read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from posbias.audit import steps
from posbias.audit.battery_settings import settings_with
from posbias.audit.results import BatteryResult
from posbias.audit.spec import parse_model_spec

SETTINGS = {"statistics": {"n_resamples": 200}}
SHAPE = np.array([0.0, 0.1, 0.6, 0.6, 0.3])  # the planted drop at each position, times the depth


class Model:
    """What `run_battery` reads of a loaded model."""

    window = 64

    def describe(self) -> dict:
        return {"architecture": "Planted", "window": self.window}


def planted(battery: str, depth: float = 0.5):
    """A battery function giving planted values: MRR (a sweep with token positions, or a grid over two lengths), or
    raw scores (probes) with no ratio scale, so no PSI."""
    metric = {"probes": "score"}.get(battery, "MRR")

    def run(model, settings):
        rng = np.random.default_rng(len(battery))
        lengths = (40, 80) if battery == "grid" else (None,)
        rows = []
        for length in lengths:
            for unit in range(10):
                for position, drop in enumerate(SHAPE):
                    base = -1.0 - 2 * depth * drop if metric == "score" else 1 - depth * drop
                    row = {"unit": f"q{unit}", "position": position, "value": float(base + rng.normal(0, 0.05))}
                    if battery == "sweep":
                        row.update(tokens=12 * position, end=12 * position + 10)
                    if length:
                        row.update(length=length, depth=position / 4)
                    rows.append(row)
        extra = {"chance": 0.2} if metric == "MRR" else {}
        extra.update({"doc_tokens": 60} if battery == "sweep" else {"depths": [0, 0.25, 0.5, 0.75, 1.0]}
                     if battery == "grid" else {})
        return BatteryResult(battery, metric, pd.DataFrame(rows), extra=extra)
    return run


def write_audit(out: Path, monkeypatch, name: str = "mini", batteries=("sweep", "probes", "grid"),
                spec: str = "cross-encoder:org/mini?revision=abc123") -> list[dict]:
    """`out/<name>/<battery>.{parquet,curve.csv,json}` as `posbias audit` writes them (its `run_battery`)."""
    monkeypatch.setattr(steps, "battery_function", planted)
    ref = parse_model_spec(f"{spec}&name={name}" if "?" in spec else f"{spec}?name={name}")
    return [steps.run_battery(Model(), ref, battery, settings_with(SETTINGS), out) for battery in batteries]
