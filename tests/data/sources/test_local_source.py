"""A user's own files: JSONL and TSV documents, queries, qrels and a run, plain or compressed."""

from __future__ import annotations

import bz2
import gzip
import lzma

import pytest

from posbias.data.sources import SourceError, local
from posbias.io import FormatError

COMPRESSORS = {"": lambda data: data, ".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}
EXPECTED = [{"id": "D1", "text": "Title One body one"}, {"id": "D2", "text": "body two, café"}]


def _write(path, text: str, suffix: str = ""):
    target = path.with_name(path.name + suffix)
    target.write_bytes(COMPRESSORS[suffix](text.encode("utf-8")))
    return target


@pytest.mark.parametrize("suffix", list(COMPRESSORS))
def test_jsonl_documents_in_every_compression(tmp_path, suffix):
    text = ('{"id": "D1", "title": "Title One", "text": "body one"}\n'
            "\n"  # blank lines are skipped
            '{"id": "D2", "text": "body two, café"}\n')
    assert list(local.documents(_write(tmp_path / "docs.jsonl", text, suffix))) == EXPECTED


@pytest.mark.parametrize("suffix", list(COMPRESSORS))
def test_tsv_documents_in_every_compression(tmp_path, suffix):
    text = "D1\tTitle One\tbody one\nD2\tbody two, café\n"
    assert list(local.documents(_write(tmp_path / "docs.tsv", text, suffix))) == EXPECTED


def test_jsonl_field_aliases(tmp_path):
    text = ('{"docid": "A", "contents": "pyserini"}\n{"_id": "B", "title": "", "text": "beir"}\n'
            '{"doc_id": 7, "body": "numeric id"}\n')
    assert list(local.documents(_write(tmp_path / "docs.jsonl", text))) == [
        {"id": "A", "text": "pyserini"}, {"id": "B", "text": "beir"}, {"id": "7", "text": "numeric id"}]


@pytest.mark.parametrize("name, text, line_no", [
    ("docs.jsonl", '{"id": "D1", "text": "ok"}\n{"id": "D2", "text": \n', 2),
    ("docs.jsonl", '{"id": "D1", "text": "ok"}\n\n{"title": "no id"}\n', 3),
    ("docs.jsonl", '["not", "an", "object"]\n', 1),
    ("docs.jsonl", '{"id": "D1", "text": 5}\n', 1),
    ("docs.tsv", "D1\tok\nD2\n", 2),
    ("docs.tsv", "D1\ta\tb\tc\n", 1),
    ("docs.tsv", "\tno id\n", 1),
])
def test_malformed_document_line_names_file_and_line(tmp_path, name, text, line_no):
    path = _write(tmp_path / name, text, ".gz")
    with pytest.raises(FormatError) as err:
        list(local.documents(path))
    assert err.value.path == str(path) and err.value.line_no == line_no
    assert str(err.value).startswith(f"{path}:{line_no}: ")


def test_unknown_document_format_is_refused(tmp_path):
    with pytest.raises(SourceError, match="cannot tell the format"):
        list(local.documents(_write(tmp_path / "docs.csv", "D1,text\n", ".gz")))


def test_queries_qrels_and_run(tmp_path):
    queries = _write(tmp_path / "queries.tsv", "q1\twhat is it\nq2\twho\n", ".bz2")
    qrels = _write(tmp_path / "qrels.txt", "q1 0 D1 2\nq1 0 D2 0\n", ".xz")
    run = _write(tmp_path / "run.trec", "q1 Q0 D2 1 3.5 bm25\nq1 Q0 D1 2 1.25 bm25\n", ".gz")
    assert local.queries(queries) == {"q1": "what is it", "q2": "who"}
    assert local.qrels(qrels) == {"q1": {"D1": 2, "D2": 0}}
    assert local.run(run) == {"q1": {"D2": 3.5, "D1": 1.25}}


def test_malformed_run_line_names_file_and_line(tmp_path):
    run = _write(tmp_path / "run.trec", "q1 Q0 D2 1 3.5 bm25\nq1 Q0 D1 2 high bm25\n")
    with pytest.raises(FormatError, match=rf"^{run}:2: score 'high'"):
        local.run(run)
