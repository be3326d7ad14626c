"""`posbias probes build|score|report`, each step alone, on config/test/tiny.yaml's synthetic Re-DocRED with BM25
(no weights); and how the steps refuse bad input."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from posbias.cli import main

ROOT = Path(__file__).resolve().parents[2]
TINY = yaml.safe_load((ROOT / "config" / "test" / "tiny.yaml").read_text())


def write_config(tmp_path: Path, config: dict = TINY) -> Path:
    """The config with its response cache (the poison's mock answers) under `tmp_path`."""
    config = {**config, "llm": {**config["llm"], "cache": {"dir": str(tmp_path / "cache"), "mode": "read_write"}}}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_build_score_and_report_each_alone(tmp_path):
    config = write_config(tmp_path)
    pairs, scores, report = tmp_path / "pairs", tmp_path / "scores", tmp_path / "report"
    assert main(["probes", "build", "--config", str(config), "--out", str(pairs)]) == 0
    assert (pairs / "synthetic_revised.json").exists() and (pairs / "poison_replacements.jsonl").exists()
    assert main(["probes", "score", "--config", str(config), "--scorer", "bm25", "--pairs", str(pairs),
                 "--out", str(scores)]) == 0
    assert main(["probes", "report", "--config", str(config), "--pairs", str(pairs), "--scores", str(scores),
                 "--out", str(report)]) == 0
    summary = pd.read_csv(report / "probes.csv")
    assert set(summary["scorer"]) == {"bm25"} and (summary["n"] == 8).all()  # only the scorer that was scored
    assert (report / "figures" / "sweep.png").stat().st_size > 0
    sensitivity = pd.read_csv(report / "sensitivity.csv")  # the sweep probe through the shared metric suite
    assert sensitivity["scorer"].tolist() == ["bm25"] and sensitivity["significant_drops"].tolist() == [0]
    assert sensitivity["best_worst_gap"].tolist() == [0.0]  # BM25 cannot see order: a flat curve
    assert sensitivity["psi"].isna().all()  # raw scores: no ratio
    assert main(["probes", "rag", "--config", str(config), "--pairs", str(pairs), "--out", str(tmp_path / "rag")]) == 0
    assert set(pd.read_csv(tmp_path / "rag" / "rag.csv")["condition"]) == {"poison_doc", "foil_doc", "evidence_doc",
                                                                           "no_doc"}
    assert list((tmp_path / "cache").glob("echo-*.jsonl"))  # the readers and the judge answered through the cache


def test_an_unknown_scorer_is_named_with_the_known_ones(tmp_path, input_error):
    config = write_config(tmp_path)
    assert main(["probes", "build", "--config", str(config), "--out", str(tmp_path / "pairs")]) == 0
    message = input_error(["probes", "score", "--config", config, "--scorer", "splade", "--pairs",
                           tmp_path / "pairs", "--out", tmp_path / "scores"])
    assert "has no probes.scorers.splade; known: bm25, dense, firstp" in message
    assert not (tmp_path / "scores").exists()


def test_a_checkpoint_scorer_without_its_checkpoint_says_so(tmp_path, input_error, monkeypatch):
    config = write_config(tmp_path)
    assert main(["probes", "build", "--config", str(config), "--out", str(tmp_path / "pairs")]) == 0
    monkeypatch.chdir(tmp_path)  # no results/models here
    message = input_error(["probes", "score", "--config", config, "--scorer", "firstp", "--pairs",
                           tmp_path / "pairs", "--out", tmp_path / "scores"])
    assert message.startswith("--checkpoint results/models/firstp/seed1: no such directory")


def test_missing_pairs_and_a_config_without_probes_are_errors(tmp_path, input_error):
    config = write_config(tmp_path)
    (tmp_path / "empty").mkdir()
    message = input_error(["probes", "score", "--config", config, "--scorer", "bm25", "--pairs", tmp_path / "empty",
                           "--out", tmp_path / "scores"])
    assert "no answer_importance.jsonl (write it with posbias probes build)" in message
    bare = write_config(tmp_path, {k: v for k, v in TINY.items() if k != "probes"})
    assert input_error(["probes", "build", "--config", bare, "--out", tmp_path / "p"]).endswith("no probes section")
