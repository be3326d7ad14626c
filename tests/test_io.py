import bz2
import errno
import gzip
import lzma
import os
import shutil
import stat
from types import SimpleNamespace

import numpy as np
import pytest
from safetensors import SafetensorError

from posbias.evaluation.metrics import trec_eval_order
from posbias.disk_space import full_disk_reported
from posbias.errors import DiskFullError, InputError
from posbias.io import (FormatError, atomic_directory, atomic_write, batched, iter_run, json_objects, nonempty,
                        read_documents, read_folds, read_json, read_qrels, read_queries, read_ranked_run, read_run,
                        write_jsonl, write_run)


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


def no_space() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def torch_save_error() -> RuntimeError:
    """What torch.save raises when the file it writes finds no space: its own words, raised while handling the
    file's OSError."""
    try:
        raise no_space()
    except OSError:
        try:
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598")
        except RuntimeError as err:
            return err


@pytest.fixture
def scratch_disk(tmp_path, monkeypatch):
    """tmp_path as a mount point with 200 MB free: the messages' last part, fixed."""
    monkeypatch.setattr(shutil, "disk_usage", lambda path: SimpleNamespace(free=200_000_000))
    real_ismount = os.path.ismount
    monkeypatch.setattr(os.path, "ismount", lambda path: str(path) == str(tmp_path) or real_ismount(path))
    return tmp_path


@pytest.mark.parametrize("error", [
    no_space(), OSError(errno.EDQUOT, os.strerror(errno.EDQUOT)),
    SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)"),
    RuntimeError("Error in faiss::write_index: 'ret == (size * 4)' failed: write error in x.faiss: 65491 != 256000 "
                 "(No space left on device)"),
    torch_save_error()], ids=["ENOSPC", "EDQUOT", "safetensors", "faiss", "torch.save"])
def test_a_write_that_finds_no_space_is_one_line_naming_the_output_what_it_needs_and_what_is_free(scratch_disk,
                                                                                                   error):
    checkpoint = scratch_disk / "checkpoints" / "seed1"
    with pytest.raises(DiskFullError) as raised:
        with full_disk_reported(checkpoint, needs=1_300_000_000):
            raise error
    assert str(raised.value) == (f"no space left on device writing {checkpoint}: needs about 1.3 GB, 200.0 MB free "
                                 f"on {scratch_disk}")
    assert raised.value.__cause__ is error


@pytest.mark.parametrize("needs,shown", [(812, "812 bytes"), (4_660_000, "4.7 MB"), (3 * 10**12, "3.0 TB")])
def test_the_space_needed_is_shown_in_the_unit_people_read(scratch_disk, needs, shown):
    with pytest.raises(DiskFullError, match=f": needs about {shown}, "):
        with full_disk_reported(scratch_disk / "out", needs=needs):
            raise no_space()


@pytest.mark.parametrize("error", [OSError(errno.EACCES, "Permission denied"), ValueError("bad"),
                                   DiskFullError("no space left on device writing inner: needs about 1 byte"),
                                   KeyboardInterrupt()])
def test_other_failures_pass_unchanged_and_the_staging_still_goes(tmp_path, error):
    with pytest.raises(type(error)) as raised:
        with full_disk_reported(tmp_path / "out") as write:
            write.staging = tmp_path / ".out.1234abcd"
            write.staging.mkdir()
            (write.staging / "half.bin").write_bytes(b"x")
            raise error
    assert raised.value is error and list(tmp_path.iterdir()) == []


class FillingFile:
    """A file on a disk with `room` bytes left: a write past them fails as the kernel's does (ENOSPC)."""

    def __init__(self, handle, room: int):
        self.handle, self.room = handle, room

    def write(self, data):
        if len(data) > self.room:
            raise no_space()
        self.room -= len(data)
        return self.handle.write(data)

    def __getattr__(self, name):
        return getattr(self.handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.close()


def test_a_run_the_disk_has_no_room_for_names_the_run_and_what_it_wrote_and_leaves_nothing(scratch_disk,
                                                                                             monkeypatch):
    real_fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda fd, *args, **kwargs: FillingFile(real_fdopen(fd, *args, **kwargs), 40))
    run = scratch_disk / "runs" / "dev.run"
    with pytest.raises(DiskFullError) as raised:
        write_run(run, {"q1": {f"d{i}": float(i) for i in range(5)}}, tag="t")  # 17 bytes a line: 2 fit
    assert str(raised.value) == (f"no space left on device writing {run}: needs more than the 34 bytes written "
                                 f"before the disk filled, 200.0 MB free on {scratch_disk}")
    assert list(run.parent.iterdir()) == []  # no run, no hidden temporary


def test_a_full_disk_before_anything_is_written_names_the_output_and_the_free_space(scratch_disk, monkeypatch):
    def refuse(*args, **kwargs):  # a new directory needs a block too
        raise no_space()

    monkeypatch.setattr(os, "mkdir", refuse)
    index = scratch_disk / "new" / "index"
    with pytest.raises(DiskFullError) as raised:
        with atomic_directory(index):
            pass
    assert str(raised.value) == f"no space left on device writing {index}: 200.0 MB free on {scratch_disk}"


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


def test_gzip_output_is_reproducible_and_reads_back(tmp_path):
    records = [{"question": "q", "answers": ["Ö"]}, {"n": 2}]
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "sub" / "b.jsonl.gz"
    assert write_jsonl(a, records) == 2 and write_jsonl(b, records) == 2
    assert a.read_bytes() == b.read_bytes()
    assert gzip.decompress(a.read_bytes()).decode() == '{"question": "q", "answers": ["Ö"]}\n{"n": 2}\n'
    assert [record for _, record in json_objects(a)] == records
    plain = tmp_path / "c.jsonl"
    write_jsonl(plain, records)
    assert plain.read_text(encoding="utf-8").count("\n") == 2


def test_a_failed_write_leaves_nothing_behind(tmp_path):
    def records():
        yield {"n": 1}
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_jsonl(tmp_path / "out.jsonl.gz", records())
    assert list(tmp_path.iterdir()) == []
