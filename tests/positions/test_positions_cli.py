"""`posbias positions locate|report`: the rules' jobs by hand, with the arguments the config gives the rules."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from posbias.cli import main
from posbias.io import write_documents, write_qrels, write_queries

ROOT = Path(__file__).resolve().parents[2]
ANSWER = "the capital of freedonia is fredville."
FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore."


@pytest.fixture
def files(tmp_path):
    """The demo config with one sparse set in whitespace tokens (no BM25 top-k), and its small files."""
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    config["positions"] = {"tokenizer": "whitespace", "bin_tokens": 16, "max_bin": 4,
                           "matching": {"bm25_depth": 0},
                           "sets": {"mine": {"kind": "sparse", "queryset": "dev", "passages": "train", "label": "Mine"}},
                           "groups": {"g": {"label": "G", "sets": ["mine"]}}, "figure1": ["g"]}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    write_documents(tmp_path / "docs.jsonl", [{"id": "d1", "text": f"{FILLER} {ANSWER} {FILLER}"},
                                              {"id": "d2", "text": FILLER}])
    write_queries(tmp_path / "queries.tsv", {"q1": "capital of freedonia"})
    write_qrels(tmp_path / "qrels.txt", {"q1": {"d1": 1, "d2": 1}})
    write_documents(tmp_path / "passages.jsonl", [{"id": "p1", "text": ANSWER}])
    write_qrels(tmp_path / "passage_qrels.txt", {"q1": {"p1": 1}})
    return tmp_path


def test_locate_then_report(files):
    main(["positions", "locate", "--config", str(files / "config.yaml"), "--set", "mine",
          "--docs", str(files / "docs.jsonl"), "--queries", str(files / "queries.tsv"),
          "--qrels", str(files / "qrels.txt"), "--passages", str(files / "passages.jsonl"),
          "--passage-qrels", str(files / "passage_qrels.txt"), "--out", str(files / "rows")])
    rows = pd.read_csv(files / "rows" / "mine.tsv", sep="\t").set_index("doc_id")
    assert rows.loc["d1", "position"] == 15 and rows.loc["d2", "position"] == -1
    assert json.loads((files / "rows" / "mine.json").read_text())["matched_queries"] == 1
    main(["positions", "report", "--config", str(files / "config.yaml"), "--rows", str(files / "rows"),
          "--out", str(files / "report")])
    table = pd.read_csv(files / "report" / "positions.csv")
    assert table.loc[0, "documents"] == 2 and "Mine" in (files / "report" / "positions.md").read_text()
    assert (files / "report" / "figures" / "figure1.png").read_bytes()[:4] == b"\x89PNG"


def test_an_unknown_set_names_the_known_ones(files, input_error):
    message = input_error(["positions", "locate", "--config", files / "config.yaml", "--set", "nope",
                           "--docs", files / "docs.jsonl", "--queries", files / "queries.tsv",
                           "--qrels", files / "qrels.txt", "--out", files / "rows"])
    assert message.endswith("has no positions.sets.nope; known: mine")
