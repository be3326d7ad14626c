"""`posbias audit compare A B`: two audits' files, written here in the format `posbias audit` writes them, compared
unit by unit into tables and a page; other units, another metric or other statistics are refused with one line."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from posbias.cli import main
from posbias.stats.curve_comparison import summary_differences
from posbias.stats.position_curve import curve_summary, position_curve

STATISTICS = {"alpha": 0.05, "confidence": 0.95, "correction": "holm", "n_resamples": 400, "seed": 0, "test": "t"}
CHANCE = 0.457


def write_audit(out: Path, name: str, depth: float, seed: int, units: int = 16, battery: str = "sweep",
                metric: str = "MRR", statistics: dict = STATISTICS) -> Path:
    """`out/name/<battery>.{parquet,json}`: a U-shaped MRR curve `depth` deep, noise per unit and position."""
    rng = np.random.default_rng(seed)
    shape = 1 - depth * np.array([0.0, 0.5, 1.0, 1.0, 0.5, 0.0])
    values = np.clip(shape + rng.normal(0, 0.08, (units, len(shape))), 0, 1)
    directory = out / name
    directory.mkdir(parents=True)
    frame = pd.DataFrame([{"unit": f"q{u}", "position": p, "value": float(values[u, p])}
                          for u in range(units) for p in range(len(shape))])
    frame.to_parquet(directory / f"{battery}.parquet")
    curve = position_curve(frame, test=statistics["test"], correction=statistics["correction"], n_resamples=0)
    record = {"battery": battery, "name": name, "metric": metric, "test": statistics["test"], "n_units": units,
              "settings": {"statistics": statistics}, "extra": {"chance": CHANCE},
              "summary": curve_summary(curve, chance=CHANCE)}
    (directory / f"{battery}.json").write_text(json.dumps(record))
    return directory


def test_a_flatter_audit_is_found_less_position_sensitive_on_the_same_units(tmp_path, capsys):
    base = write_audit(tmp_path / "audits", "base", depth=0.5, seed=1)
    mitigated = write_audit(tmp_path / "audits", "base-maxp", depth=0.05, seed=2)
    assert main(["audit", "compare", str(base), str(mitigated), "--out", str(tmp_path / "cmp")]) == 0
    assert capsys.readouterr().out.strip() == f"{tmp_path / 'cmp'}/comparison.html"
    positions = pd.read_csv(tmp_path / "cmp" / "sweep.positions.csv")
    assert positions["position"].tolist() == [0, 1, 2, 3, 4, 5]
    assert (positions.loc[2:3, "difference"] > 0.3).all() and (positions.loc[2:3, "p_adjusted"] < 0.05).all()
    summary = pd.read_csv(tmp_path / "cmp" / "sweep.summary.csv").set_index("number")
    expected = summary_differences(pd.read_parquet(base / "sweep.parquet"),
                                   pd.read_parquet(mitigated / "sweep.parquet"), chance=CHANCE, n_resamples=400,
                                   seed=0).set_index("number")
    assert summary.loc["psi", "difference"] == pytest.approx(expected.loc["psi", "difference"])
    assert summary.loc["psi", "ci_high"] == pytest.approx(expected.loc["psi", "ci_high"])
    assert summary.loc["psi", "ci_high"] < 0
    assert summary.loc["shape (Friedman)", "p"] < 0.001
    # base drops from position 1 on (its reach 1, counted from 1), base-maxp nowhere (reach 6: every position)
    assert summary.loc["reach", ["a", "b", "difference"]].tolist() == [1, 6, 5]
    assert summary.loc["reach", "ci_low"] <= 5 <= summary.loc["reach", "ci_high"]
    assert "| reach (position, 1 = first) | 1 | ≥ 6 | 5 |" in (tmp_path / "cmp" / "sweep.summary.md").read_text()
    page = (tmp_path / "cmp" / "comparison.html").read_text()
    assert "<h1>base-maxp (B) against base (A), unit by unit</h1>" in page
    assert "base-maxp is less position-sensitive than base (its PSI is lower, the interval below 0)" in page
    assert "significantly higher than base at positions 1, 2, 3, 4, lower at no position" in page


def test_audits_of_other_units_metrics_or_statistics_are_refused_with_one_line(tmp_path, input_error):
    base = write_audit(tmp_path / "a", "base", depth=0.5, seed=1)
    fewer = write_audit(tmp_path / "b", "fewer", depth=0.5, seed=2, units=15)
    message = input_error(["audit", "compare", base, fewer, "--out", tmp_path / "cmp"])
    assert message.startswith("sweep of base and sweep of fewer were not measured on the same units and positions: "
                              "6 (unit, position) pairs only in sweep of base")
    accuracy = write_audit(tmp_path / "c", "accuracy", depth=0.5, seed=2, metric="accuracy")
    assert input_error(["audit", "compare", base, accuracy, "--out", tmp_path / "cmp"]) == \
        "sweep: base measured MRR, accuracy accuracy"
    wilcoxon = write_audit(tmp_path / "d", "wilcoxon", depth=0.5, seed=2, statistics={**STATISTICS, "test": "wilcoxon"})
    assert "were tested with other statistics settings" in input_error(
        ["audit", "compare", base, wilcoxon, "--out", tmp_path / "cmp"])
    assert input_error(["audit", "compare", base, fewer, "--battery", "reader", "--out", tmp_path / "cmp"]) == (
        f"--battery reader: not audited in both {base} (sweep) and {fewer} (sweep)")
    assert input_error(["audit", "compare", base, tmp_path / "nowhere", "--out", tmp_path / "cmp"]) == \
        f"second {tmp_path / 'nowhere'}: no such directory"
    assert not (tmp_path / "cmp").exists()


def test_the_audit_itself_still_needs_its_out_directory(input_error):
    assert input_error(["audit", "--model", "bi-encoder:offline:all-MiniLM-L6-v2"]).endswith("--out is required")
