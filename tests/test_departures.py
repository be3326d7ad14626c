"""Every paper experiment states where it departs from the paper, in the config file that makes its numbers.

`departures:` is a mapping (departure -> paper / here / why / option); mappings merge across `base:` layers, so an
experiment also carries its bases' departures. A file that names an `experiment:` must list its own.
"""

from pathlib import Path

import pytest
import yaml

from posbias.config import load_config, read_layered

PAPER = Path(__file__).resolve().parents[1] / "config" / "paper"
EXPERIMENTS = sorted(p for p in PAPER.glob("*.yaml") if "experiment" in yaml.safe_load(p.read_text()))


def test_there_are_paper_experiments():
    assert len(EXPERIMENTS) >= 8


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.stem)
def test_each_paper_experiment_lists_its_own_departures(path):
    own = yaml.safe_load(path.read_text()).get("departures") or {}
    assert own, f"{path.name} lists no departures"
    for name, entry in own.items():
        assert all(entry.get(key, "").strip() for key in ("paper", "here", "why")), f"{path.name}: {name}"


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.stem)
def test_the_layered_config_keeps_every_base_departure(path):
    raw = yaml.safe_load(path.read_text())
    bases = raw.get("base", [])
    inherited = set()
    for base in [bases] if isinstance(bases, str) else bases:
        inherited |= set(read_layered(PAPER / base).get("departures") or {})
    layered = set(load_config(path).data.get("departures") or {})
    assert inherited | set(raw["departures"]) <= layered


def test_table2_states_that_its_originals_are_retrained_at_the_debiased_length():
    departures = load_config(PAPER / "debias.yaml").data["departures"]
    assert any("8109" in entry["here"] and "1431" in entry["paper"] for entry in departures.values())


def test_the_probes_state_their_precision_and_the_rag_gold_answers():
    own = yaml.safe_load((PAPER / "probes.yaml").read_text())["departures"]  # not the inherited training ones
    text = " ".join(f"{k} {v}" for k, v in own.items()).lower()
    assert "precision" in text or "fp16" in text
    assert "gold" in text and "rag" in text


def test_the_probes_sample_in_the_authors_order_test_then_validation():
    """The authors' query table is built from test, then validation; the seeded samples draw rows by position."""
    files = load_config(PAPER / "probes.yaml").data["probes"]["redocred"]["files"]
    assert [f["split"] for f in files] == ["test", "validation"]
