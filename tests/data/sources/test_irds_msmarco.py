"""MS MARCO documents (v1, v2) and passages read for real through ir_datasets, from fixtures in its cache layout."""

from __future__ import annotations

import os
import re
from pathlib import Path

import ir_datasets.util.download
import pytest
from fixtures_msmarco import (write_gzip, write_msmarco_document, write_msmarco_document_v2, write_msmarco_passage,
                              write_passage_collection, write_text, write_v2_docs)

from posbias.data.sources import SourceError, irds

HOME = Path(os.environ["IR_DATASETS_HOME"])  # set by tests/conftest.py before ir_datasets was imported


@pytest.fixture(autouse=True)
def no_downloads(monkeypatch):
    """A missing or misnamed fixture file must fail the test, not start a download."""
    def refuse(self):
        raise AssertionError(f"ir_datasets tried to download {self.url}")
    monkeypatch.setattr(ir_datasets.util.download.RequestsDownload, "__iter__", refuse)


@pytest.fixture
def document_v1():
    return write_msmarco_document(HOME)


@pytest.fixture
def document_v2():
    return write_msmarco_document_v2(HOME)


@pytest.fixture
def passage():
    return write_msmarco_passage(HOME)


FAMILIES = {"msmarco-document": write_msmarco_document, "msmarco-document-v2": write_msmarco_document_v2,
            "msmarco-passage": write_msmarco_passage}
JUDGED_FROM = ["msmarco-document/trec-dl-2019", "msmarco-document/trec-dl-2020", "msmarco-document-v2/trec-dl-2021",
               "msmarco-passage/train"]
QUERY_SETS = ["msmarco-document/train", "msmarco-document/dev", "msmarco-passage/dev/small",
              *JUDGED_FROM, *(f"{full_id}/judged" for full_id in JUDGED_FROM)]


def _write(dataset_id: str) -> dict:
    """Write the fixture of the dataset's family; return what it should read back."""
    return FAMILIES[dataset_id.split("/")[0]](HOME)


def _error_while_reading(records) -> tuple[int, SourceError]:
    """How many records came before the SourceError, and the error."""
    count = 0
    with pytest.raises(SourceError) as caught:
        for _ in records:
            count += 1
    return count, caught.value


# ---------------------------------------------------------------------------------------------------------
# what comes back


@pytest.mark.parametrize("family", FAMILIES)
def test_documents_come_back_in_file_order_with_title_and_body(family):
    expected = _write(family)
    got = list(irds.documents(family, progress=False))
    assert got == [{"id": doc_id, "text": text} for doc_id, text in expected["docs"].items()]


@pytest.mark.parametrize("dataset_id", QUERY_SETS)
def test_queries(dataset_id):
    expected = _write(dataset_id)
    assert irds.queries(dataset_id) == expected["queries"][dataset_id]


@pytest.mark.parametrize("dataset_id", QUERY_SETS)
def test_graded_qrels(dataset_id):
    expected = _write(dataset_id)
    assert irds.qrels(dataset_id) == expected["qrels"][dataset_id]


@pytest.mark.parametrize("full_id", JUDGED_FROM)
def test_judged_subset_keeps_exactly_the_judged_queries(full_id):
    _write(full_id)
    full, judged = irds.queries(full_id), irds.queries(f"{full_id}/judged")
    judged_ids = set(irds.qrels(f"{full_id}/judged"))
    assert len(judged) < len(full)  # the fixture has unjudged queries to drop
    assert judged == {qid: text for qid, text in full.items() if qid in judged_ids}


def test_v1_document_keeps_every_body_line(document_v1):
    # the body runs over several lines in the TREC file; all of them reach the text
    text = next(doc["text"] for doc in irds.documents("msmarco-document", progress=False) if doc["id"] == "D1555982")
    assert text.startswith("Rose - Wikipedia A rose") and text.endswith("tens of thousands of cultivars.")


def test_passage_encoding_is_repaired_by_ir_datasets(passage):
    texts = {doc["id"]: doc["text"] for doc in irds.documents("msmarco-passage", progress=False)}
    assert texts["2"] == "The café opened in 1685."


# ---------------------------------------------------------------------------------------------------------
# broken files: the SourceError names the dataset, the file and the record


def _assert_names(err: SourceError, dataset_id: str, path: Path, kind: str, number: int):
    message = str(err)
    assert message.startswith(f"{dataset_id}: ") and str(path) in message, message
    assert re.search(rf"\b{kind} record {number}\b", message), message


def test_truncated_v1_documents(document_v1):
    path = document_v1["files"]["docs"]
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    count, err = _error_while_reading(irds.documents("msmarco-document", progress=False))
    assert count < len(document_v1["docs"])
    _assert_names(err, "msmarco-document", path, "docs", count + 1)
    assert "EOFError" in str(err)


def test_query_line_without_tab(document_v1):
    path = write_gzip(document_v1["files"]["dev/queries"], "174249\tfine\n320792 no tab here\n")
    with pytest.raises(SourceError) as caught:
        irds.queries("msmarco-document/dev")
    _assert_names(caught.value, "msmarco-document/dev", path, "queries", 2)


def test_broken_query_line_in_a_judged_subset_names_the_queries_file(document_v1):
    # both queries are judged, so the subset's record number is also the line number
    path = write_gzip(document_v1["files"]["trec-dl-2019/queries"], "19335\tfine\n47923\n")
    with pytest.raises(SourceError) as caught:
        irds.queries("msmarco-document/trec-dl-2019/judged")
    _assert_names(caught.value, "msmarco-document/trec-dl-2019/judged", path, "queries", 2)


def test_qrels_line_with_three_columns(document_v1):
    lines = "19335 Q0 D1555982 3\n19335 Q0 D301595 0\n47923 Q0 2\n"
    path = write_text(document_v1["files"]["trec-dl-2019/qrels"], lines)
    with pytest.raises(SourceError) as caught:
        irds.qrels("msmarco-document/trec-dl-2019")
    _assert_names(caught.value, "msmarco-document/trec-dl-2019", path, "qrels", 3)


def test_malformed_json_line_in_v2_documents(document_v2):
    good = '{"docid": "msmarco_doc_00_0", "url": "u", "title": "t", "headings": "", "body": "b"}\n'
    path = write_v2_docs(document_v2["files"]["docs"], {"00": [good], "01": [good, '{"docid": "msmarco_doc_01_\n']})
    count, err = _error_while_reading(irds.documents("msmarco-document-v2", progress=False))
    assert count == 2  # the record number runs on across the shards in the tar
    _assert_names(err, "msmarco-document-v2", path, "docs", 3)
    assert "JSONDecodeError" in str(err)


def test_non_integer_grade_in_v2_qrels(document_v2):
    lines = "787021 Q0 msmarco_doc_00_0 3\n2082 Q0 msmarco_doc_01_0 high\n"
    path = write_text(document_v2["files"]["trec-dl-2021/qrels"], lines)
    with pytest.raises(SourceError) as caught:
        irds.qrels("msmarco-document-v2/trec-dl-2021")
    _assert_names(caught.value, "msmarco-document-v2/trec-dl-2021", path, "qrels", 2)


def test_passage_line_without_tab(passage):
    write_passage_collection(passage["files"]["collectionandqueries"], "0\tfirst\n1\tsecond\n2 no tab\n", "", "")
    count, err = _error_while_reading(irds.documents("msmarco-passage", progress=False))
    assert count == 2
    # the file named is the collection ir_datasets extracted from the tar, where the bad line is
    _assert_names(err, "msmarco-passage", passage["files"]["docs"], "docs", 3)
