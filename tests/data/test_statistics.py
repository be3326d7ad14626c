"""Dataset statistics (Tables 9 and 10): token averages with the offline BERT WordPiece tokenizer, sampling, judgments."""

from __future__ import annotations

import gzip
import json

import pytest

from posbias.data.statistics import (collection_statistics, queryset_statistics, read_statistics,
                                     write_statistics)
from posbias.io import FormatError

OFFLINE = "offline:all-MiniLM-L6-v2"

DOCS = [
    {"id": "d1", "text": "Tokenization of unbelievably long documents, naïvely: café-style!"},
    {"id": "d2", "text": "  Short\tdocument,\nwith odd   spacing.  "},
    {"id": "d3", "text": "supercalifragilisticexpialidocious " * 3},
    {"id": "d4", "title": "A title counts", "text": "towards the tokens of a document"},
    {"id": "d5", "title": "", "text": "an empty title adds nothing"},
] + [{"id": f"x{i}", "text": " ".join(["word"] * (i + 1))} for i in range(15)]

QUERIES = {"q1": "what is a long document", "q2": "café naïveté", "q3": "unjudged query here",
           "q4": "supercalifragilisticexpialidocious"}
QRELS = [("q1", "d1", 2), ("q1", "d2", 1), ("q1", "d3", 0),
         ("q2", "d4", 0),
         ("q4", "d5", 1), ("q4", "x1", 2), ("q4", "x2", 2),
         ("q9", "d1", 2)]  # q9 is not in the queries file: ignored


def _count(tokenizer, text):
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def _joined(doc):
    return f"{doc['title']} {doc['text']}" if doc.get("title") else doc["text"]


def _write_docs(path, docs=DOCS):
    lines = "".join(json.dumps(doc, ensure_ascii=False) + "\n" for doc in docs)
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as out:
            out.write(lines)
    else:
        path.write_text(lines, encoding="utf-8")
    return str(path)


@pytest.fixture
def query_files(tmp_path):
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"{qid}\t{text}\n" for qid, text in QUERIES.items()), encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{qid} 0 {doc} {grade}\n" for qid, doc, grade in QRELS), encoding="utf-8")
    return str(queries), str(qrels)


@pytest.mark.parametrize("name", ["docs.jsonl", "docs.jsonl.gz"])
@pytest.mark.parametrize("batch_size", [1, 3, 1000])
def test_collection_average_matches_per_text_counts(tmp_path, tokenizer, name, batch_size):
    path = _write_docs(tmp_path / name)
    expected = sum(_count(tokenizer, _joined(doc)) for doc in DOCS) / len(DOCS)
    stats = collection_statistics(path, OFFLINE, batch_size=batch_size, progress=False)
    assert stats == {"n_documents": len(DOCS), "avg_tokens": pytest.approx(expected), "sampled": len(DOCS)}


def test_title_is_joined_to_the_text(tmp_path, tokenizer):
    doc = DOCS[3]
    stats = collection_statistics(_write_docs(tmp_path / "one.jsonl", [doc]), OFFLINE, progress=False)
    assert stats["avg_tokens"] == _count(tokenizer, "A title counts towards the tokens of a document")
    assert stats["avg_tokens"] > _count(tokenizer, doc["text"])


def test_sample_is_seeded_and_counts_the_full_collection(tmp_path, tokenizer):
    path = _write_docs(tmp_path / "docs.jsonl")
    counts = [_count(tokenizer, _joined(doc)) for doc in DOCS]
    first = collection_statistics(path, OFFLINE, sample=5, seed=3, progress=False)
    assert first == collection_statistics(path, OFFLINE, sample=5, seed=3, progress=False)
    assert first["n_documents"] == len(DOCS) and first["sampled"] == 5
    # The sample average is the mean of some 5 documents' counts.
    assert min(counts) <= first["avg_tokens"] <= max(counts)
    averages = {collection_statistics(path, OFFLINE, sample=5, seed=seed, progress=False)["avg_tokens"]
                for seed in range(10)}
    assert len(averages) > 1  # different seeds draw different samples


@pytest.mark.parametrize("sample", [len(DOCS), len(DOCS) + 100])
def test_sample_as_large_as_the_collection_is_the_full_average(tmp_path, sample):
    path = _write_docs(tmp_path / "docs.jsonl")
    full = collection_statistics(path, OFFLINE, progress=False)
    assert collection_statistics(path, OFFLINE, sample=sample, seed=7, progress=False) == full


def test_whitespace_tokenizer(tmp_path):
    stats = collection_statistics(_write_docs(tmp_path / "docs.jsonl"), "whitespace", sample=3, progress=False)
    assert stats["n_documents"] == len(DOCS) and stats["sampled"] == 3


def test_malformed_document_line_reports_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write(json.dumps(DOCS[0]) + "\n" + '{"id": "d2", "text": ' + "\n")
    with pytest.raises(FormatError, match=r"bad\.jsonl\.gz:2: invalid JSON"):
        collection_statistics(str(path), OFFLINE, sample=1, progress=False)


def test_bad_arguments_and_empty_collection(tmp_path):
    path = _write_docs(tmp_path / "docs.jsonl")
    with pytest.raises(ValueError, match="sample"):
        collection_statistics(path, OFFLINE, sample=0, progress=False)
    with pytest.raises(ValueError, match="batch_size"):
        collection_statistics(path, OFFLINE, batch_size=0, progress=False)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no documents"):
        collection_statistics(str(empty), OFFLINE, progress=False)


@pytest.mark.parametrize("rel_level, positives", [(1, [2, 0, 3]), (2, [1, 0, 2])])
def test_queryset_statistics(query_files, tokenizer, rel_level, positives):
    queries, qrels = query_files
    stats = queryset_statistics(queries, qrels, OFFLINE, rel_level=rel_level)
    expected_tokens = sum(_count(tokenizer, text) for text in QUERIES.values()) / len(QUERIES)
    # Judged: q1, q2 (a single grade-0 judgment still makes it judged) and q4; q3 is unjudged, q9 unknown.
    assert stats == {"n_queries": 4, "avg_tokens": pytest.approx(expected_tokens),
                     "avg_positive_judgments": pytest.approx(sum(positives) / 3), "n_judged_queries": 3}


def test_malformed_qrels_line_reports_file_and_line(query_files, tmp_path):
    queries, _ = query_files
    qrels = tmp_path / "bad.qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 high\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"bad\.qrels:2: grade 'high'"):
        queryset_statistics(queries, str(qrels), OFFLINE)


def test_queries_without_judgments_are_an_error(query_files, tmp_path):
    queries, _ = query_files
    qrels = tmp_path / "other.qrels"
    qrels.write_text("q9 0 d1 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="none of the queries"):
        queryset_statistics(queries, str(qrels), OFFLINE)


def test_statistics_round_trip(tmp_path):
    stats = {"n_documents": 3213835, "avg_tokens": 1578.25, "sampled": 100000}
    path = tmp_path / "out" / "stats.json"
    write_statistics(stats, str(path))
    assert read_statistics(str(path)) == stats
    assert [p.name for p in path.parent.iterdir()] == ["stats.json"]  # no temporary file left behind


def test_a_token_store_gives_the_same_collection_statistics_without_tokenising(tmp_path):
    from posbias.data.statistics import store_statistics
    from posbias.data.token_store import build_token_store
    from posbias.io import write_documents

    docs = [{"id": f"d{i}", "title": "A title" if i % 2 else "", "text": "word " * (3 * i + 1)} for i in range(7)]
    write_documents(tmp_path / "docs.jsonl", docs)
    build_token_store(tmp_path / "docs.jsonl", tmp_path / "tokens", "offline:all-MiniLM-L6-v2", cap=4,
                      progress=False)  # the cap does not change the recorded lengths
    expected = collection_statistics(tmp_path / "docs.jsonl", "offline:all-MiniLM-L6-v2", progress=False)
    assert store_statistics(tmp_path / "tokens", "offline:all-MiniLM-L6-v2") == pytest.approx(expected)
    with pytest.raises(ValueError, match="not 'whitespace'"):
        store_statistics(tmp_path / "tokens", "whitespace")
