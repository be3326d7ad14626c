import bz2
import gzip
import lzma
import os
import stat

import numpy as np
import pytest

from posbias.evaluation.metrics import trec_eval_order
from posbias.errors import InputError
from posbias.io import (FormatError, atomic_directory, atomic_write, batched, iter_run, nonempty, read_documents,
                        read_folds, read_json, read_qrels, read_queries, read_ranked_run, read_run, write_run)


def test_run_round_trip_orders_by_score_then_docid_descending_as_trec_eval(tmp_path):
    path = tmp_path / "a.run"
    write_run(path, {"q1": {"d2": 1.0, "d1": 1.0, "d3": 2.5, "d10": 1.0}}, tag="t")
    lines = path.read_text().splitlines()
    assert lines == ["q1 Q0 d3 1 2.5 t", "q1 Q0 d2 2 1.0 t", "q1 Q0 d10 3 1.0 t", "q1 Q0 d1 4 1.0 t"]
    assert read_run(path) == {"q1": {"d3": 2.5, "d1": 1.0, "d2": 1.0, "d10": 1.0}}
    # The rank column is the rank evaluation sees.
    evaluated = trec_eval_order(read_run(path))["q1"]
    assert sorted(evaluated, key=evaluated.get, reverse=True) == [line.split()[2] for line in lines]


def test_run_scores_round_trip_float32_and_float64_exactly(tmp_path):
    close = [np.float32(1.0000001), np.float32(1.0000002), np.float32(-3.4e38), np.float32(1e-45)]
    assert f"{close[0]:.6f}" == f"{close[1]:.6f}"  # what the old writer collapsed into a tie
    wide = [0.1 + 0.2, 1 / 3, 1e300]
    run = {"q32": {f"d{i}": score for i, score in enumerate(close)}, "q64": {f"d{i}": s for i, s in enumerate(wide)}}
    write_run(tmp_path / "a.run", run, tag="t")
    back = read_run(tmp_path / "a.run")
    assert [np.float32(back["q32"][f"d{i}"]) for i in range(len(close))] == close
    assert [back["q64"][f"d{i}"] for i in range(len(wide))] == wide
    assert back["q32"]["d1"] > back["q32"]["d0"]


def test_read_ranked_run_keeps_the_rank_column(tmp_path):
    path = tmp_path / "listwise.run"
    path.write_text("q1 Q0 b 1 0 t\nq1 Q0 c 2 0 t\nq1 Q0 a 3 0 t\nq2 Q0 x 1 2.5 t\n")
    assert read_ranked_run(path) == {"q1": {"b": (1, 0.0), "c": (2, 0.0), "a": (3, 0.0)}, "q2": {"x": (1, 2.5)}}
    assert read_run(path) == {"q1": {"b": 0.0, "c": 0.0, "a": 0.0}, "q2": {"x": 2.5}}
    assert list(iter_run(path)) == [("q1", "b"), ("q1", "c"), ("q1", "a"), ("q2", "x")]
    path.write_text("q1 Q0 b first 0 t\n")
    with pytest.raises(FormatError, match=r"listwise\.run:1: rank 'first' is not an integer"):
        read_ranked_run(path)
    path.write_text("q1 Q0 b 1 0 t\nq1 Q0 b 2 0 t\n")
    with pytest.raises(FormatError, match=r"listwise\.run:2: document b is listed twice"):
        read_ranked_run(path)


@pytest.fixture
def umask():
    """Set the process umask for a test, and restore it after."""
    saved = os.umask(0o022)
    yield os.umask
    os.umask(saved)


@pytest.mark.parametrize("mask,expected", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_atomic_write_gives_the_mode_open_would_give(tmp_path, umask, mask, expected):
    umask(mask)
    with atomic_write(tmp_path / "out.txt") as out:
        out.write("x")
    with open(tmp_path / "plain.txt", "w") as out:
        out.write("x")
    assert stat.S_IMODE((tmp_path / "out.txt").stat().st_mode) == expected
    assert stat.S_IMODE((tmp_path / "plain.txt").stat().st_mode) == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt", "plain.txt"]  # no hidden temporary left


def test_atomic_write_fsyncs_before_the_rename(tmp_path, monkeypatch):
    events = []
    monkeypatch.setattr(os, "fsync", lambda fd: events.append(("fsync", os.path.exists(tmp_path / "f"))))
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append(("replace",)), real_replace(a, b)))
    with atomic_write(tmp_path / "f") as out:
        out.write("data")
    assert events[:2] == [("fsync", False), ("replace",)]  # the file, before it gets its name
    assert events[2:] == [("fsync", True)]  # then the directory
    assert (tmp_path / "f").read_text() == "data"


def test_atomic_directory_replaces_an_existing_target(tmp_path, umask):
    umask(0o022)
    target = tmp_path / "index"
    target.mkdir()
    (target / "old.bin").write_text("old")
    with atomic_directory(target) as staging:
        assert staging.parent == tmp_path and staging.name.startswith(".index.") and not any(staging.iterdir())
        assert (target / "old.bin").exists()  # the old output stays in place while the new one is written
        (staging / "new.bin").write_text("new")
        (staging / "sub").mkdir()
    assert [p.name for p in tmp_path.iterdir()] == ["index"]
    assert sorted(p.name for p in target.iterdir()) == ["new.bin", "sub"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


def test_atomic_directory_leaves_nothing_behind_on_an_exception(tmp_path):
    with pytest.raises(RuntimeError, match="killed"):
        with atomic_directory(tmp_path / "new" / "index") as staging:
            (staging / "half.bin").write_text("x")
            raise RuntimeError("killed")
    assert list((tmp_path / "new").iterdir()) == []
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "old.bin").write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_directory(tmp_path / "kept"):
            raise KeyboardInterrupt
    assert [p.name for p in tmp_path.iterdir() if p.name != "new"] == ["kept"]
    assert (tmp_path / "kept" / "old.bin").read_text() == "old"


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


@pytest.mark.parametrize("text,message", [
    ("q1\t1\nq2 2\n", r"folds\.tsv:2: expected 'qid<TAB>fold' with a fold number from 1"),
    ("q1\t1\nq2\t0\n", r"folds\.tsv:2: expected 'qid<TAB>fold' with a fold number from 1"),
    ("q1\t1\nq2\tone\n", r"folds\.tsv:2: expected 'qid<TAB>fold' with a fold number from 1"),
    ("q1\t1\n\nq1\t2\n", r"folds\.tsv:3: query q1 is already in fold 1"),
    ("q1\t1\nq2\t2\x00\n", r"folds\.tsv:2: a NUL byte: this is a binary file, not text"),
])
def test_malformed_folds_name_file_and_line(tmp_path, text, message):
    (tmp_path / "folds.tsv").write_text(text)
    with pytest.raises(FormatError, match=message):
        read_folds(tmp_path / "folds.tsv")


def test_a_score_that_is_not_finite_is_refused_by_every_run_reader(tmp_path):
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 nan t\n")
    for reader in (read_run, read_ranked_run, lambda path: list(iter_run(path))):
        with pytest.raises(FormatError, match=r"a\.run:2: score 'nan' is not a finite number"):
            reader(tmp_path / "a.run")


def test_undecodable_bytes_are_found_at_their_line(tmp_path):
    path = tmp_path / "q.tsv.xz"
    with lzma.open(path, "wb") as handle:  # far beyond the decoder's first read, and compressed
        handle.write(b"".join(b"q%d\tquery %d\n" % (i, i) for i in range(5000)) + b"q5000\tcaf\xe9\n")
    with pytest.raises(FormatError, match=r"q\.tsv\.xz:5001: byte 0xe9 is not UTF-8 text$") as err:
        read_queries(path)
    assert isinstance(err.value, InputError) and err.value.line_no == 5001


def test_nonempty_and_read_json_name_the_file(tmp_path):
    assert nonempty({"q1": {}}, "qrels.txt", "judgments") == {"q1": {}}
    with pytest.raises(InputError, match=r"^qrels\.txt: no judgments: the file is empty$"):
        nonempty({}, "qrels.txt", "judgments")
    (tmp_path / "meta.json").write_text('{"a": 1}')
    assert read_json(tmp_path / "meta.json") == {"a": 1}
    (tmp_path / "meta.json").write_text('{"a": 1,\n\n "b"}')
    with pytest.raises(FormatError, match=r"meta\.json:3: invalid JSON \(Expecting ':' delimiter\)"):
        read_json(tmp_path / "meta.json")


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
