import bz2
import gzip
import lzma

import pytest

from posbias.io import FormatError, batched, read_documents, read_qrels, read_queries, read_run, write_run


def test_run_round_trip_orders_by_score_then_docid(tmp_path):
    path = tmp_path / "a.run"
    write_run(path, {"q1": {"d2": 1.0, "d1": 1.0, "d3": 2.5}}, tag="t")
    lines = path.read_text().splitlines()
    assert lines == ["q1 Q0 d3 1 2.500000 t", "q1 Q0 d1 2 1.000000 t", "q1 Q0 d2 3 1.000000 t"]
    assert read_run(path) == {"q1": {"d3": 2.5, "d1": 1.0, "d2": 1.0}}


@pytest.mark.parametrize("suffix,opener", [(".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open)])
def test_compressed_inputs_are_read_transparently(tmp_path, suffix, opener):
    path = tmp_path / f"qrels.txt{suffix}"
    with opener(path, "wt") as handle:
        handle.write("q1 0 d1 2\nq1 0 d2 0\n")
    assert read_qrels(path) == {"q1": {"d1": 2, "d2": 0}}


def test_malformed_lines_name_file_and_line(tmp_path):
    run = tmp_path / "bad.run"
    run.write_text("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 high t\n")
    with pytest.raises(FormatError, match=r"bad.run:2: score 'high'"):
        read_run(run)
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "a", "text": "x"}\n{"id": "b"}\n')
    with pytest.raises(FormatError, match=r"docs.jsonl:2"):
        read_documents(docs)
    queries = tmp_path / "q.tsv"
    queries.write_text("q1\tfine\nq2 no tab\n")
    with pytest.raises(FormatError, match=r"q.tsv:2"):
        read_queries(queries)


def test_failed_write_leaves_nothing_behind(tmp_path):
    path = tmp_path / "x.run"
    with pytest.raises(ValueError):
        write_run(path, {"q": {"d": 1.0}}, tag="has space")
    with pytest.raises(TypeError):
        write_run(path, {"q": {"d": "not a number"}}, tag="t")
    assert list(tmp_path.iterdir()) == []


def test_read_documents_can_keep_only_the_documents_asked_for(tmp_path):
    from posbias.io import read_documents, write_documents

    write_documents(tmp_path / "d.jsonl", [{"id": "a", "text": "x"}, {"id": "b", "text": "y", "title": "t"}])
    assert read_documents(tmp_path / "d.jsonl", keep={"b", "zz"}) == {"b": "t y"}
    assert read_documents(tmp_path / "d.jsonl") == {"a": "x", "b": "t y"}


@pytest.mark.parametrize("name,text,reader,message", [
    ("short.run", "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4\n", read_run, r"short\.run:2: expected 'qid Q0 docid rank score tag'"),
    ("short.qrels", "q1 0 d1 1\nq1 d2 1\n", read_qrels, r"short\.qrels:2: expected 'qid iteration docid grade'"),
    ("grade.qrels", "q1 0 d1 1\n\nq1 0 d2 1.5\n", read_qrels, r"grade\.qrels:3: grade '1\.5' is not an integer"),
])
def test_malformed_run_and_qrels_lines_name_file_and_line(tmp_path, name, text, reader, message):
    (tmp_path / name).write_text(text)
    with pytest.raises(FormatError, match=message):
        reader(tmp_path / name)


def test_duplicates_are_errors_at_the_second_occurrence(tmp_path):
    run = tmp_path / "dup.run.gz"
    with gzip.open(run, "wt") as handle:  # the same document for another query is fine; twice for q1 is not
        handle.write("q1 Q0 d1 1 0.5 t\nq2 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4 t\nq1 Q0 d1 3 0.3 t\n")
    with pytest.raises(FormatError, match=r"dup\.run\.gz:4: document d1 is listed twice for query q1") as err:
        read_run(run)
    assert err.value.line_no == 4
    qrels = tmp_path / "dup.qrels"
    qrels.write_text("q1 0 d1 1\nq2 0 d1 0\nq1 0 d1 2\n")
    with pytest.raises(FormatError, match=r"dup\.qrels:3: document d1 is judged twice for query q1"):
        read_qrels(qrels)


def test_batched_reads_lazily_and_keeps_the_remainder():
    consumed = []

    def items():
        for i in range(5):
            consumed.append(i)
            yield i

    batches = batched(items(), 2)
    assert next(batches) == [0, 1] and consumed == [0, 1]  # nothing read ahead of the first batch
    assert list(batches) == [[2, 3], [4]]
    assert list(batched([], 3)) == []
