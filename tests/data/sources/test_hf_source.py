"""The Hugging Face source reads a local copy of the LongEmbed repository through `datasets.load_dataset`."""

from __future__ import annotations

import json

import pytest

from posbias.data.sources import SourceError, hf

CARD = """---
configs:
{configs}
---
A local copy of dwzhu/LongEmbed, reduced to two context lengths.
"""
CONFIG = """- config_name: {name}
  data_files:
  - split: corpus
    path: {name}/corpus.jsonl
  - split: queries
    path: {name}/queries.jsonl
  - split: qrels
    path: {name}/qrels.jsonl"""


def _write_jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def _longembed_rows(name):
    """Two documents and one query per context length; the second document of each length is relevant."""
    corpus, queries, qrels = [], [], []
    for length in (256, 512):
        for i in range(2):
            corpus.append({"doc_id": f"{name}_{length}_{i}", "text": f"haystack {length}\nline {i}\tend",
                           "context_length": length})
        queries.append({"qid": f"{name}_q{length}", "text": f"where is\tthe needle at {length}?",
                        "context_length": length})
        qrels.append({"qid": f"{name}_q{length}", "doc_id": f"{name}_{length}_1", "context_length": length})
    return {"corpus": corpus, "queries": queries, "qrels": qrels}


@pytest.fixture
def repo(tmp_path):
    """The repository layout of dwzhu/LongEmbed: a card declaring the configs, JSONL files per config and split."""
    root = tmp_path / "LongEmbed"
    for name in ("needle", "passkey"):
        for split, rows in _longembed_rows(name).items():
            _write_jsonl(root / name / f"{split}.jsonl", rows)
    configs = "\n".join(CONFIG.format(name=name) for name in ("needle", "passkey"))
    (root / "README.md").write_text(CARD.format(configs=configs), encoding="utf-8")
    return root


@pytest.fixture
def options(tmp_path):
    return {"cache_dir": str(tmp_path / "hf-cache")}


def test_documents_queries_and_qrels_of_a_local_copy(repo, options):
    docs = list(hf.documents(str(repo), "passkey", **options))
    assert docs == [{"id": f"passkey_{n}_{i}", "text": f"haystack {n} line {i} end"}
                    for n in (256, 512) for i in range(2)]
    assert hf.queries(str(repo), "passkey", **options) == {
        "passkey_q256": "where is the needle at 256?", "passkey_q512": "where is the needle at 512?"}
    assert hf.qrels(str(repo), "passkey", **options) == {
        "passkey_q256": {"passkey_256_1": 1}, "passkey_q512": {"passkey_512_1": 1}}


def test_context_lengths_select_rows_in_every_split(repo, options):
    assert [d["id"] for d in hf.documents(str(repo), "needle", 512, **options)] == ["needle_512_0", "needle_512_1"]
    assert list(hf.queries(str(repo), "needle", [512], **options)) == ["needle_q512"]
    assert hf.qrels(str(repo), "needle", [512], **options) == {"needle_q512": {"needle_512_1": 1}}
    assert len(list(hf.documents(str(repo), "needle", [256, 512], **options))) == 4


def test_unknown_context_length_names_the_available_ones(repo, options):
    with pytest.raises(SourceError, match=r"split 'queries'.*context_length \[1024\].*available: \[256, 512\]"):
        hf.queries(str(repo), "needle", [1024], **options)


def test_score_column_gives_the_grade(repo, options):
    _write_jsonl(repo / "needle" / "qrels.jsonl", [{"qid": "q", "doc_id": "d", "score": 2, "context_length": 256}])
    assert hf.qrels(str(repo), "needle", **options) == {"q": {"d": 2}}


def test_missing_column_names_dataset_config_split_and_column(repo, options):
    rows = [{k: v for k, v in row.items() if k != "text"} for row in _longembed_rows("needle")["corpus"]]
    _write_jsonl(repo / "needle" / "corpus.jsonl", rows)
    with pytest.raises(SourceError) as err:
        list(hf.documents(str(repo), "needle", **options))
    message = str(err.value)
    assert str(repo) in message and "'needle'" in message and "'corpus'" in message and "'text'" in message


def test_repeated_document_id_is_an_error(repo, options):
    rows = [{"doc_id": "same", "text": "t", "context_length": n} for n in (256, 512)]
    _write_jsonl(repo / "needle" / "corpus.jsonl", rows)
    with pytest.raises(SourceError, match="'same' occurs more than once"):
        list(hf.documents(str(repo), "needle", **options))


def test_missing_split_file_is_a_source_error(repo, options):
    (repo / "needle" / "qrels.jsonl").unlink()
    with pytest.raises(SourceError, match=r"config 'needle', split 'qrels'.*could not be loaded"):
        hf.qrels(str(repo), "needle", **options)


def test_parquet_files_through_data_files(tmp_path, options):
    """A user's own copy in another format: the `parquet` builder with one file per split."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    files = {}
    for split, rows in _longembed_rows("needle").items():
        files[split] = str(tmp_path / f"{split}.parquet")
        pq.write_table(pa.Table.from_pylist(rows), files[split])
    assert hf.qrels("parquet", "needle", 256, data_files=files, **options) == {"needle_q256": {"needle_256_1": 1}}
    assert [d["id"] for d in hf.documents("parquet", "needle", 256, data_files=files, **options)] == [
        "needle_256_0", "needle_256_1"]
    with pytest.raises(SourceError, match="data_files names no files for this split"):
        hf.queries("parquet", "needle", data_files={"corpus": files["corpus"]}, **options)
