"""Zero-shot models from the command line: `posbias rerank --model` scores with the pretrained weights, and
`posbias train` refuses them."""

from __future__ import annotations

from pathlib import Path

import yaml

from posbias.cli import main
from posbias.io import read_run

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = yaml.safe_load((ROOT / "config.yaml").read_text())
DOCS = {"d1": "the capital of zorvia is mendal", "d2": "filler words here and there", "d3": "zorvia has rivers"}


def test_rerank_scores_with_a_zero_shot_models_pretrained_weights(tmp_path, token_store):
    store = token_store(DOCS)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(DEFAULT))
    (tmp_path / "q.tsv").write_text("q1\tcapital of zorvia\n")
    (tmp_path / "c.run").write_text("".join(f"q1 Q0 {d} {r} {3 - r} bm25\n" for r, d in enumerate(DOCS, 1)))
    assert main(["rerank", "--model", "longp_e5", "--config", str(tmp_path / "config.yaml"), "--tokens",
                 str(store.directory), "--queries", str(tmp_path / "q.tsv"), "--candidates", str(tmp_path / "c.run"),
                 "--run", str(tmp_path / "out.run"), "--precision", "fp32"]) == 0
    run = read_run(tmp_path / "out.run")
    assert set(run["q1"]) == set(DOCS) and max(run["q1"], key=run["q1"].get) == "d1"  # MiniLM as it ships


def test_a_zero_shot_model_is_not_trained_and_a_trained_one_needs_its_checkpoint(tmp_path, input_error, usage_error):
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(DEFAULT))
    for name in ("tokens",):
        (tmp_path / name).mkdir()
    for name in ("q.tsv", "qrels.txt", "c.run"):
        (tmp_path / name).write_text("")
    common = ["--tokens", tmp_path / "tokens", "--queries", tmp_path / "q.tsv", "--candidates", tmp_path / "c.run"]
    assert input_error(["train", "--config", config, "--model", "longp_e5", "--seed", "1", *common, "--qrels",
                        tmp_path / "qrels.txt", "--out", tmp_path / "m"]) == \
        f"--model longp_e5: models.longp_e5 in {config} is zero-shot (never trained); rerank with it directly: " \
        f"posbias rerank --model longp_e5"
    assert input_error(["rerank", "--config", config, "--model", "maxp", *common, "--run", tmp_path / "x.run"]) == \
        f"--model maxp: models.maxp in {config} is trained, not zero-shot; rerank with one of its checkpoints " \
        f"(--checkpoint)"
    assert usage_error(["rerank", *common, "--run", tmp_path / "x.run"]) == \
        "give either --checkpoint (a trained model) or --model (a zero-shot model of --config)"
