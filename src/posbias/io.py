"""Readers and writers for the file formats that connect the pipeline stages.

Formats: documents JSONL (`{"id", "text"}`), queries TSV
(`qid<TAB>text`), TREC qrels (`qid 0 docid grade`) and TREC runs
(`qid Q0 docid rank score tag`), and folds TSV (`qid<TAB>fold`). Readers accept `.gz`, `.bz2` and `.xz`
transparently and report malformed lines with the file name and line number (`FormatError`), and so bytes
that are not UTF-8 text and NUL bytes (a binary file); a truncated or mislabelled compressed file is an
`InputError` naming the file. An empty file reads as no records: whether that is an error is up to the
caller (`nonempty`).
Writers are atomic: they write a hidden temporary file in the target directory,
fsync it and rename it, so a killed job (or a crashed node) never leaves a file that
looks complete; `atomic_directory` does the same for directory outputs (indexes,
checkpoints). Files and directories get the permissions a plain `open()` or `mkdir`
would give (0o666 or 0o777 less the umask), so results stay readable by the group
on shared storage. A SIGKILL can still leave a hidden `.name.XXXXXXXX` file or
directory behind; it is never mistaken for the output.
A write that finds no space left (`full_disk_reported`, used by these writers and by every other writer of the
pipeline) is a `DiskFullError` naming the output, the space it needed and the space free.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import itertools
import json
import lzma
import math
import numbers
import os
import secrets
import shutil
import zlib
from pathlib import Path
from typing import Callable, Collection, Iterable, Iterator, Mapping, TypeVar

from posbias.disk_space import full_disk_reported
from posbias.errors import InputError

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
_COMPRESSIONS = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}
# What each kind of compressed file starts with: names a compressed file whose name lacks its suffix.
_MAGIC = {b"\x1f\x8b": ".gz", b"BZh": ".bz2", b"\xfd7zXZ\x00": ".xz"}
# What the decompressors raise for data that is not theirs or ends early (bz2: a plain OSError).
_DAMAGED = (EOFError, OSError, zlib.error, lzma.LZMAError)


class FormatError(InputError):
    """A line of an input file does not follow its format."""

    def __init__(self, path: str | os.PathLike, line_no: int, message: str):
        super().__init__(f"{path}:{line_no}: {message}")
        self.path = str(path)
        self.line_no = line_no


def open_text(path: str | os.PathLike) -> io.TextIOBase:
    """Open a (possibly compressed) text file for reading as UTF-8."""
    opener = _OPENERS.get(Path(path).suffix, open)
    return opener(path, "rt", encoding="utf-8")


def numbered_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """`(line number, line)` for the non-blank lines of a (possibly compressed) UTF-8 text file.

    Bytes that are not UTF-8 and NUL bytes are a `FormatError` at their line; compressed data that is
    damaged, cut short or not of the kind the name says is an `InputError` naming the file.
    """
    with open_text(path) as handle:  # a missing file is the OSError of open(), which names it
        try:
            for line_no, line in enumerate(handle, start=1):
                if "\0" in line:
                    raise FormatError(path, line_no, "a NUL byte: this is a binary file, not text")
                line = line.rstrip("\n").rstrip("\r")
                if line.strip():
                    yield line_no, line
        except UnicodeDecodeError as err:
            raise FormatError(path, _undecodable_line(path), f"byte 0x{err.object[err.start]:02x} is not UTF-8 "
                                                             f"text{_compression_hint(path)}") from None
        except _DAMAGED as err:
            raise InputError(_damage(path, err)) from None


def _undecodable_line(path: str | os.PathLike) -> int:
    """The number of the first line of `path` that is not UTF-8 (the decoder reads ahead, so it cannot say)."""
    with _OPENERS.get(Path(path).suffix, open)(path, "rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return line_no
    return line_no  # a multi-byte character cut by the end of the file


def _compression_hint(path: str | os.PathLike) -> str:
    with open(path, "rb") as handle:
        head = handle.read(6)
    suffix = next((suffix for magic, suffix in _MAGIC.items() if head.startswith(magic)), None)
    if suffix is None or Path(path).suffix == suffix:
        return ""
    return f"; the file is {_COMPRESSIONS[suffix]}-compressed, so its name should end in {suffix}"


def _damage(path: str | os.PathLike, err: Exception) -> str:
    kind = _COMPRESSIONS.get(Path(path).suffix)
    if kind is None:
        return f"{path}: cannot be read: {err}"
    if isinstance(err, EOFError):
        return f"{path}: the {kind} data ends early: the file is truncated (an interrupted download or copy?)"
    return f"{path}: not valid {kind} data ({err}); is the file {kind}-compressed, as its name says?"


_T = TypeVar("_T")

# O_EXCL: a fresh file, never someone else's; mode 0o666 below: the kernel applies the umask (and any default
# ACL of the directory), exactly as for open(path, "w"), without reading the process-wide umask.
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _hidden_sibling(target: Path, create: Callable[[Path], _T]) -> tuple[Path, _T]:
    """Create a new `.name.XXXXXXXX` next to `target` with `create(path)` (which must fail if it exists)."""
    for _ in range(100):
        candidate = target.with_name(f".{target.name}.{secrets.token_hex(4)}")
        try:
            return candidate, create(candidate)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name next to {target}")


def _fsync(path: str | os.PathLike, directory: bool = False) -> None:
    """fsync a file, or a directory (which makes renames in it durable), by name; best effort: some file
    systems and platforms cannot."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", needs: int | None = None):
    """Yield a handle to a hidden temporary file that replaces `path` only on success.

    The file gets the permissions `open(path, "w")` would give, and is flushed and fsynced before the
    rename, so that a node crash cannot leave a complete-looking empty file; the directory is fsynced after.
    A full disk is a `DiskFullError` naming `path` and the bytes it `needs`, if given (`full_disk_reported`).
    """
    target = Path(path)
    with full_disk_reported(target, needs) as write:
        target.parent.mkdir(parents=True, exist_ok=True)
        write.staging, fd = _hidden_sibling(target, lambda name: os.open(name, _NEW_FILE, 0o666))
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(write.staging, target)
    _fsync(target.parent, directory=True)


def _fsync_tree(root: Path) -> None:
    """fsync every file and directory below `root` (best effort), before it is renamed into place."""
    for directory, _, files in os.walk(root):
        for name in files:
            _fsync(os.path.join(directory, name))
        _fsync(directory, directory=True)


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike, needs: int | None = None):
    """Yield a new, empty staging directory (a `Path`) that replaces the directory `path` only on success.

    The staging directory is a hidden sibling (`.name.XXXXXXXX`, same file system, so renames are atomic) with
    the permissions `mkdir` would give. On success its contents are fsynced and it is renamed to `path`. An
    existing `path` is first renamed aside to another hidden sibling and deleted after the new one is in
    place: between those two renames (two system calls, no copying) `path` does not exist, and a concurrent
    reader can miss it; POSIX has no atomic exchange of two directories. A crash in that window leaves the
    old output under its hidden name and no `path`, never a partial one. On an exception the staging
    directory is removed and `path` is untouched; a full disk is a `DiskFullError` naming `path` and the bytes
    it `needs`, if given (`full_disk_reported`).
    """
    target = Path(path)
    with full_disk_reported(target, needs) as write:
        target.parent.mkdir(parents=True, exist_ok=True)
        write.staging, _ = _hidden_sibling(target, lambda name: os.mkdir(name, 0o777))
        yield write.staging
        _fsync_tree(write.staging)
        _replace_directory(write.staging, target)
    _fsync(target.parent, directory=True)


def _replace_directory(staging: Path, target: Path) -> None:
    if not os.path.lexists(target):
        os.rename(staging, target)
        return
    aside, _ = _hidden_sibling(target, lambda name: os.mkdir(name, 0o700))
    # A directory renamed onto an empty directory replaces it; a file or link is moved into it instead.
    moved = aside if target.is_dir() and not target.is_symlink() else aside / target.name
    os.rename(target, moved)
    try:
        os.rename(staging, target)
    except BaseException:
        with contextlib.suppress(OSError):  # put the old output back; the caller removes the staging directory
            os.rename(moved, target)
            os.rmdir(aside)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def nonempty(records: _T, path: str | os.PathLike, what: str) -> _T:
    """`records` as read from `path`; none at all is an `InputError` naming the file (`what` it should hold)."""
    if not records:
        raise InputError(f"{path}: no {what}: the file is empty")
    return records


def read_json(path: str | os.PathLike):
    """A (small) JSON file, such as the metadata of a store or a checkpoint; invalid JSON is a `FormatError`."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise FormatError(path, err.lineno, f"invalid JSON ({err.msg})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text, so not JSON") from None


# --- documents -------------------------------------------------------------

def json_objects(path: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """`(line number, object)` for each line of a JSONL file; a line that is not a JSON object is an error."""
    for line_no, line in numbered_lines(path):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise FormatError(path, line_no, f"invalid JSON ({err.msg})") from None
        if not isinstance(record, dict):
            raise FormatError(path, line_no, "expected a JSON object")
        yield line_no, record


def write_jsonl(path: str | os.PathLike, records: Iterable[Mapping]) -> int:
    """Write records one per line, atomically, gzipped when the name ends in `.gz`, with reproducible bytes (the
    gzip header's timestamp and file name are left out, so the same records give the same file); returns how many
    were written."""
    count = 0
    with atomic_write(path, "wb") as raw:
        # GzipFile.close() writes the trailer and leaves `raw` open for atomic_write to sync and rename.
        with (gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) if Path(path).suffix == ".gz"
              else contextlib.nullcontext(raw)) as out:
            for count, record in enumerate(records, start=1):
                out.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
    return count


def document_records(path: str | os.PathLike) -> Iterator[dict]:
    """Each object of a JSONL document file, checked: a non-empty `id` (a string or an integer) and a string
    `text`; other fields (`title`, ...) pass as they are."""
    for line_no, record in json_objects(path):
        if "id" not in record or "text" not in record:
            raise FormatError(path, line_no, 'expected an object with "id" and "text"')
        doc_id, text = record["id"], record["text"]
        if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or doc_id == "":
            raise FormatError(path, line_no, f'"id" must be a non-empty string, not {doc_id!r}')
        if not isinstance(text, str):
            raise FormatError(path, line_no, f'"text" of document {doc_id} must be a string, not {text!r}')
        yield record


def iter_documents(path: str | os.PathLike) -> Iterator[tuple[str, str]]:
    """Stream `(doc_id, text)` from a JSONL document file (title prepended if present)."""
    for record in document_records(path):
        text = record["text"]
        if record.get("title"):
            text = f"{record['title']} {text}"
        yield str(record["id"]), text


def read_documents(path: str | os.PathLike, keep: Collection[str] | None = None) -> dict[str, str]:
    """Read a JSONL document file into `{doc_id: text}` (title prepended if present).

    With `keep`, only those documents are held in memory (a rerank needs its candidates, not the collection).
    """
    if keep is None:
        return dict(iter_documents(path))
    return {doc_id: text for doc_id, text in iter_documents(path) if doc_id in keep}


def write_documents(path: str | os.PathLike, docs: Iterable[Mapping]) -> int:
    """Write (possibly streamed) documents as JSONL; returns how many were written."""
    count = 0
    with atomic_write(path) as out:
        for count, doc in enumerate(docs, start=1):
            out.write(json.dumps(dict(doc), ensure_ascii=False) + "\n")
    return count


# --- queries ---------------------------------------------------------------

def read_queries(path: str | os.PathLike) -> dict[str, str]:
    queries: dict[str, str] = {}
    for line_no, line in numbered_lines(path):
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0]:
            raise FormatError(path, line_no, "expected 'qid<TAB>text'")
        if parts[0] in queries:  # which text a ranker reads would depend on the line order
            raise FormatError(path, line_no, f"query {parts[0]} is listed twice")
        queries[parts[0]] = parts[1]
    return queries


def write_queries(path: str | os.PathLike, queries: Mapping[str, str]) -> None:
    with atomic_write(path) as out:
        for qid, text in queries.items():
            if "\t" in text or "\n" in text:
                raise ValueError(f"query {qid} contains a tab or newline")
            out.write(f"{qid}\t{text}\n")


# --- qrels -----------------------------------------------------------------

Qrels = dict[str, dict[str, int]]


def read_qrels(path: str | os.PathLike) -> Qrels:
    qrels: Qrels = {}
    for line_no, line in numbered_lines(path):
        parts = line.split()
        if len(parts) != 4:
            raise FormatError(path, line_no, "expected 'qid iteration docid grade'")
        try:
            grade = int(parts[3])
        except ValueError:
            raise FormatError(path, line_no, f"grade {parts[3]!r} is not an integer") from None
        judged = qrels.setdefault(parts[0], {})
        if parts[2] in judged:  # two grades for one document: which one counts would be arbitrary
            raise FormatError(path, line_no, f"document {parts[2]} is judged twice for query {parts[0]}")
        judged[parts[2]] = grade
    return qrels


def write_qrels(path: str | os.PathLike, qrels: Mapping[str, Mapping[str, int]]) -> None:
    with atomic_write(path) as out:
        for qid, judged in qrels.items():
            for doc_id, grade in judged.items():
                out.write(f"{qid} 0 {doc_id} {int(grade)}\n")


def write_positions(path: str | os.PathLike, starts: Mapping[str, int]) -> None:
    """Token offset at which each query's relevant passage starts in its relevant document."""
    with atomic_write(path) as out:
        out.write("qid\tstart\n")
        for qid, start in starts.items():
            out.write(f"{qid}\t{start}\n")


# --- cross-validation folds --------------------------------------------------

def read_folds(path: str | os.PathLike) -> dict[str, int]:
    """`qid<TAB>fold` lines (fold a positive integer) into `{qid: fold}`."""
    folds: dict[str, int] = {}
    for line_no, line in numbered_lines(path):
        parts = line.split("\t")
        if len(parts) != 2 or not parts[1].strip().isdigit() or int(parts[1]) < 1:
            raise FormatError(path, line_no, "expected 'qid<TAB>fold' with a fold number from 1")
        if parts[0] in folds:
            raise FormatError(path, line_no, f"query {parts[0]} is already in fold {folds[parts[0]]}")
        folds[parts[0]] = int(parts[1])
    return folds


def write_folds(path: str | os.PathLike, folds: Mapping[str, int]) -> None:
    with atomic_write(path) as out:
        for qid, fold in folds.items():
            out.write(f"{qid}\t{int(fold)}\n")


# --- runs ------------------------------------------------------------------

Run = dict[str, dict[str, float]]
RankedRun = dict[str, dict[str, tuple[int, float]]]  # {qid: {doc_id: (rank column, score)}}


def read_run(path: str | os.PathLike) -> Run:
    """`{qid: {doc_id: score}}`; the rank column is not read (trec_eval ignores it too)."""
    return _read_run(path, with_rank=False)


def read_ranked_run(path: str | os.PathLike) -> RankedRun:
    """`{qid: {doc_id: (rank, score)}}`: the run with its rank column, for runs whose order is not (only)
    in their scores, such as a listwise reranker's with tied or constant scores."""
    return _read_run(path, with_rank=True)


def iter_run(path: str | os.PathLike) -> Iterator[tuple[str, str]]:
    """`(qid, doc_id)` of each line of a run, in file order, streamed (a training run at MS MARCO scale
    has tens of millions of lines). Malformed lines are errors as in `read_run`; a document listed twice
    is not (only the readers see that)."""
    for _, qid, doc_id, _, _ in _run_lines(path):
        yield qid, doc_id


def _run_lines(path: str | os.PathLike) -> Iterator[tuple[int, str, str, int, float]]:
    """`(line number, qid, doc_id, rank, score)` of each line of a run."""
    for line_no, line in numbered_lines(path):
        parts = line.split()
        if len(parts) != 6:
            raise FormatError(path, line_no, "expected 'qid Q0 docid rank score tag'")
        try:
            score = float(parts[4])
        except ValueError:
            raise FormatError(path, line_no, f"score {parts[4]!r} is not a number") from None
        if not math.isfinite(score):  # nan has no place in a ranking; inf ties with every other inf
            raise FormatError(path, line_no, f"score {parts[4]!r} is not a finite number")
        try:
            rank = int(parts[3])
        except ValueError:
            raise FormatError(path, line_no, f"rank {parts[3]!r} is not an integer") from None
        yield line_no, parts[0], parts[2], rank, score


def _read_run(path: str | os.PathLike, with_rank: bool) -> dict:
    run: dict[str, dict] = {}
    for line_no, qid, doc_id, rank, score in _run_lines(path):
        entries = run.setdefault(qid, {})
        if doc_id in entries:  # trec_eval's behaviour with duplicates is undefined; refuse them
            raise FormatError(path, line_no, f"document {doc_id} is listed twice for query {qid}")
        entries[doc_id] = (rank, score) if with_rank else score
    return run


def write_run(path: str | os.PathLike, run: Mapping[str, Mapping[str, float]], tag: str) -> None:
    """Write a TREC run in trec_eval's order: each query's documents by decreasing score, ties by
    decreasing doc id (`posbias.evaluation.metrics.trec_eval_order`), so the rank column is the rank that
    evaluation sees. Scores are written with `repr(float(score))`, which reads back as the same float64 (and
    so the same float32): rounding never creates new ties."""
    if not tag or any(ch.isspace() for ch in tag):
        raise ValueError(f"run tag {tag!r} must be a non-empty word")
    with atomic_write(path) as out:
        for qid, scores in run.items():
            ranked = sorted(((doc_id, _score(qid, doc_id, score)) for doc_id, score in scores.items()),
                            key=lambda item: (item[1], item[0]), reverse=True)
            for rank, (doc_id, score) in enumerate(ranked, start=1):
                out.write(f"{qid} Q0 {doc_id} {rank} {score!r} {tag}\n")


def _score(qid: str, doc_id: str, score) -> float:
    if not isinstance(score, numbers.Real):  # float("1.5") would pass a string through
        raise TypeError(f"score of document {doc_id} for query {qid} is {score!r}, not a number")
    return float(score)


def batched(items: Iterable, size: int) -> Iterator[list]:
    """Consecutive lists of `size` items (the last one shorter), read lazily: a stream never sits in memory."""
    iterator = iter(items)
    while batch := list(itertools.islice(iterator, size)):
        yield batch
