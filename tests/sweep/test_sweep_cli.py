"""`posbias sweep build`: the rule's job by hand, with the arguments the config gives the rule (CFG.sweep)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from sweep_data import write_source

from posbias.cli import main
from posbias.config import load_config
from posbias.sweep.steps import build_sweep

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def config(tmp_path):
    """The demo config with a small sweep in whitespace tokens."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"base": str(ROOT / "config.yaml"), "sweep": {
        "tokenizer": "whitespace", "n_queries": 2, "n_positions": 4, "doc_tokens": 60, "seed": 3}}))
    return path


def test_build_writes_what_the_rules_job_writes(tmp_path, config):
    source = write_source(tmp_path)
    flags = [f"--{key.replace('_', '-')}" for key in source]
    main(["sweep", "build", "--config", str(config), *(x for pair in zip(flags, source.values()) for x in pair),
          "--out", str(tmp_path / "cli")])
    job = load_config(config).sweep.build_args()
    names = {"docs": "docs.jsonl", "queries": "queries.tsv", "qrels": "qrels.txt", "positions": "positions.tsv",
             "candidates": "candidates.run"}
    build_sweep({k: source[k] for k in ("queries", "qrels", "docs", "positions", "candidates")}, source["passages"],
                source["passage_qrels"], job["settings"], job["tokenizer"], job["queryset"], job["depth"],
                {k: str(tmp_path / "rule" / name) for k, name in names.items()})
    assert job["settings"] == {"n_queries": 2, "n_positions": 4, "doc_tokens": 60, "seed": 3}
    for name in names.values():
        assert (tmp_path / "cli" / name).read_bytes() == (tmp_path / "rule" / name).read_bytes(), name
    assert len((tmp_path / "cli" / "positions.tsv").read_text().splitlines()) == 1 + 2 * 4

