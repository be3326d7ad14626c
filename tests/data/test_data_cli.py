"""`posbias debias` and `posbias fetch --folds`: the de-biasing and fold jobs by hand, with the arguments the
config gives the jobs, and the errors that name the flag."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from posbias.cli import main
from posbias.config import load_config
from posbias.data.debias import debias_documents

ROOT = Path(__file__).resolve().parents[2]
DOCS = [{"id": f"d{i}", "text": " ".join(f"w{i}_{j}" for j in range(12))} for i in range(5)]


def write_config(tmp_path: Path, change=None) -> str:
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    if change:
        change(config)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def test_debias_takes_the_model_s_splits_and_seed(tmp_path):
    def three_splits(config):
        config["models"]["longp_debiased"]["debias"].update(n_splits=3, seed=7)

    config = write_config(tmp_path, three_splits)
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    main(["debias", "--config", config, "--model", "longp_debiased", "--docs", str(docs),
          "--out", str(tmp_path / "out.jsonl")])
    written = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert written == list(debias_documents(iter(DOCS), 7, 3))
    assert written != list(debias_documents(iter(DOCS), 0, 1))  # the config's values, not the defaults
    cfg = load_config(config)
    assert cfg.models.debiased_collections[cfg.models.training_collection("longp_debiased")]["n_splits"] == 3


def test_debias_names_a_model_that_is_not_de_biased(tmp_path, input_error):
    config = write_config(tmp_path)
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps(DOCS[0]) + "\n")
    assert input_error(["debias", "--config", config, "--model", "maxp", "--docs", docs,
                        "--out", tmp_path / "out.jsonl"]) == \
        f"--model maxp: models.maxp in {config} has no debias block"
    assert not (tmp_path / "out.jsonl").exists()


def test_fetch_folds_names_a_query_set_without_folds(tmp_path, input_error):
    # writing them is checked against the fetch_folds job in tests/workflow/test_sources_workflow.py
    config = write_config(tmp_path)
    assert input_error(["fetch", "--config", config, "--folds", "test", "--out", tmp_path / "x.tsv"]) == \
        f"--folds test: querysets.test in {config} has no folds"
    assert not (tmp_path / "x.tsv").exists()
