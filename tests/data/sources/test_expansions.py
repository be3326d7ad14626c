"""doc2query expansion files and appending them to documents."""

from __future__ import annotations

import gzip
import logging

import pytest

from posbias.data.sources.expansions import expand, read_expansions
from posbias.io import FormatError


def test_jsonl_predicted_queries_and_expansion_strings(tmp_path):
    path = tmp_path / "d2q.jsonl.gz"
    path.write_bytes(gzip.compress(
        b'{"id": "D1", "predicted_queries": ["what is a", "a\\tmeaning"]}\n'
        b'{"id": 2, "expansion": "second doc"}\n'
        b'{"id": "D1", "predicted_queries": ["more"]}\n'))
    assert read_expansions(path) == {"D1": "what is a a meaning more", "2": "second doc"}


def test_tsv_expansions(tmp_path):
    path = tmp_path / "d2q.tsv"
    path.write_text("D1\twhat is a\n\nD2\twho\nD1\tagain\n", encoding="utf-8")
    assert read_expansions(path) == {"D1": "what is a again", "D2": "who"}


@pytest.mark.parametrize("name, text, line_no", [
    ("d2q.jsonl", '{"id": "D1", "expansion": "ok"}\n{"id": "D2", "predicted_queries": "not a list"}\n', 2),
    ("d2q.jsonl", '{"id": "D1"}\n', 1),
    ("d2q.jsonl", '{"predicted_queries": ["no id"]}\n', 1),
    ("d2q.jsonl", '{"id": "D1", "expansion": "ok"}\n{broken\n', 2),
    ("d2q.tsv", "D1\tok\nD2 no tab\n", 2),
    ("d2q.tsv", "D1\tone\ttwo\n", 1),
])
def test_malformed_line_names_file_and_line(tmp_path, name, text, line_no):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError) as err:
        read_expansions(path)
    assert err.value.path == str(path) and err.value.line_no == line_no


def test_expand_appends_and_counts_unexpanded(caplog):
    docs = [{"id": "D1", "text": "first"}, {"id": "D2", "text": "second", "title": "kept"}, {"id": "D3", "text": ""}]
    with caplog.at_level(logging.INFO, logger="posbias.data.sources.expansions"):
        expanded = list(expand(iter(docs), {"D1": "q one q two", "D9": "unused"}))
    assert expanded == [{"id": "D1", "text": "first q one q two"}, {"id": "D2", "text": "second", "title": "kept"},
                        {"id": "D3", "text": ""}]
    assert docs[0]["text"] == "first"  # the input documents are not modified
    assert "2 of 3 documents had no expansion" in caplog.text


def test_expand_warns_when_no_id_matches(caplog):
    with caplog.at_level(logging.INFO, logger="posbias.data.sources.expansions"):
        assert list(expand([{"id": "D1", "text": "t"}], {"X": "q"})) == [{"id": "D1", "text": "t"}]
    assert any(r.levelno == logging.WARNING and "no document id matched" in r.message for r in caplog.records)
