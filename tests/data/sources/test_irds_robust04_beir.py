"""Robust04 (TREC disks 4 & 5) and BEIR NQ read for real through ir_datasets, from tiny files in its own cache layout."""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

import pytest
from fixtures_robust_beir import (BEIR_NQ, ROBUST04, ROBUST04_FOLDS, beir_nq_members, write_beir_nq,
                                  write_robust04)

from posbias.data.sources import SourceError, irds

HOME = Path(os.environ["IR_DATASETS_HOME"])


@pytest.fixture(autouse=True)
def no_downloads(monkeypatch):
    """Any attempt to download fails the test: every file must be found where the fixtures put it."""
    from ir_datasets.util import download

    def refuse(self, *args, **kwargs):
        raise AssertionError(f"ir_datasets tried to download {self.url}")

    monkeypatch.setattr(download.RequestsDownload, "stream", refuse)
    monkeypatch.setattr(download.RequestsDownload, "__iter__", refuse)


@pytest.fixture
def robust04():
    return write_robust04(HOME)


@pytest.fixture
def beir_nq():
    return write_beir_nq(HOME)


def _names(err: SourceError, dataset_id: str, path: Path, what: str):
    """The message names the dataset, the file and the record."""
    message = str(err)
    assert message.startswith(f"{dataset_id}: ") and str(path) in message, message
    assert re.search(rf"{re.escape(what)}\b", message), message  # "record 3", not "record 30"


# ---------------------------------------------------------------------------------------------------------
# Robust04: what comes back


def test_robust04_documents_come_back_in_file_order_with_headline_and_text(robust04):
    got = list(irds.documents(ROBUST04, progress=False))
    assert got == [{"id": doc_id, "text": text} for doc_id, text in robust04["docs"].items()]


def test_robust04_title_queries(robust04):
    assert irds.queries(ROBUST04) == robust04["queries"]


def test_robust04_description_queries(robust04):
    assert irds.queries(ROBUST04, fields=["description"]) == robust04["descriptions"]


def test_robust04_qrels_keep_their_grades(robust04):
    assert irds.qrels(ROBUST04) == robust04["qrels"]


def test_robust04_huston_croft_folds(robust04):
    assert irds.folds(ROBUST04_FOLDS) == robust04["folds"]
    assert sorted(robust04["folds"].values()) == [1, 2, 3, 4, 5]  # one topic in each fold


# Robust04: broken files


def _rewrite_topics(path: Path, old: str, new: str):
    with gzip.open(path, "rt", encoding="utf-8") as topics:
        text = topics.read()
    assert old in text
    with gzip.open(path, "wt", encoding="utf-8") as topics:
        topics.write(text.replace(old, new, 1))


def test_robust04_qrels_line_with_a_missing_column(robust04):
    path = robust04["files"]["qrels"]
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = " ".join(lines[2].split()[:3]) + "\n"
    path.write_text("".join(lines))
    with pytest.raises(SourceError) as caught:
        irds.qrels(ROBUST04)
    _names(caught.value, ROBUST04, path, "qrels record 3")


def test_robust04_topic_without_its_description(robust04):
    path = robust04["files"]["topics"]
    _rewrite_topics(path, "<desc> Description: \nHow much", "How much")  # the second topic's <desc> tag
    with pytest.raises(SourceError) as caught:
        irds.queries(ROBUST04, fields=["description"])
    _names(caught.value, ROBUST04, path, "queries record 2")


def test_robust04_truncated_topics(robust04):
    path = robust04["files"]["topics"]
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(SourceError) as caught:
        irds.queries(ROBUST04)
    _names(caught.value, ROBUST04, path, "queries record ")
    assert "EOFError" in str(caught.value)


def test_robust04_corpus_missing_a_file(robust04):
    corpus = robust04["files"]["corpus"]
    (corpus / "NEWS_data/FT/FT944/FT944_1").unlink()
    count = 0
    with pytest.raises(SourceError) as caught:
        for _ in irds.documents(ROBUST04, progress=False):
            count += 1
    # ir_datasets only counts the files once every document has been read
    assert count == len(robust04["docs"])
    _names(caught.value, ROBUST04, corpus, f"docs record {count + 1}")
    assert "found 2294 files of the expected 2295" in str(caught.value)


# ---------------------------------------------------------------------------------------------------------
# BEIR NQ: what comes back


def test_beir_nq_documents_come_back_with_title_and_text(beir_nq):
    got = list(irds.documents(BEIR_NQ, progress=False))
    assert got == [{"id": doc_id, "text": text} for doc_id, text in beir_nq["docs"].items()]


def test_beir_nq_queries(beir_nq):
    assert irds.queries(BEIR_NQ) == beir_nq["queries"]


def test_beir_nq_test_qrels(beir_nq):
    assert irds.qrels(BEIR_NQ) == beir_nq["qrels"]


# BEIR NQ: broken files


def _nq_with_line(member: str, number: int, line: str) -> dict:
    """The default NQ zip, but line `number` (0-based) of `member` replaced."""
    members = beir_nq_members()
    lines = members[member].splitlines(keepends=True)
    lines[number] = line
    members[member] = "".join(lines)
    return write_beir_nq(HOME, members)


def test_beir_nq_corpus_line_cut_short():
    members = beir_nq_members()
    cut = members["nq/corpus.jsonl"].splitlines()[4][:30] + "\n"  # doc4's JSON, cut inside its title
    source = _nq_with_line("nq/corpus.jsonl", 4, cut)["files"]["source"]
    with pytest.raises(SourceError) as caught:
        list(irds.documents(BEIR_NQ, progress=False))
    # ir_datasets reads the whole corpus into its docstore first, so the failing line itself names the record
    _names(caught.value, BEIR_NQ, source, "docs record 1")
    assert '"_id": "doc4"' in str(caught.value)


def test_beir_nq_queries_line_that_is_not_json():
    expected = _nq_with_line("nq/queries.jsonl", 2, "test2 who wrote the harry potter novels\n")
    with pytest.raises(SourceError) as caught:
        irds.queries(BEIR_NQ)
    _names(caught.value, BEIR_NQ, expected["files"]["queries"], "queries record 3")


def test_beir_nq_qrels_line_with_a_missing_column():
    expected = _nq_with_line("nq/qrels/test.tsv", 3, "test1\tdoc2\n")  # line 0 is the header
    with pytest.raises(SourceError) as caught:
        irds.qrels(BEIR_NQ)
    _names(caught.value, BEIR_NQ, expected["files"]["qrels"], "qrels record 3")


def test_beir_nq_truncated_zip(beir_nq):
    source = beir_nq["files"]["source"]
    source.write_bytes(source.read_bytes()[: source.stat().st_size // 2])
    with pytest.raises(SourceError) as caught:
        list(irds.documents(BEIR_NQ, progress=False))
    _names(caught.value, BEIR_NQ, source, "docs record 1")
    assert "BadZipFile" in str(caught.value)
