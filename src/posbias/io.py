"""Readers and writers for the file formats that connect the pipeline stages.

Formats (see DESIGN.md): documents JSONL (`{"id", "text"}`), queries TSV
(`qid<TAB>text`), TREC qrels (`qid 0 docid grade`) and TREC runs
(`qid Q0 docid rank score tag`), and folds TSV (`qid<TAB>fold`). Readers accept `.gz`, `.bz2` and `.xz`
transparently and report malformed lines with the file name and line number.
Writers are atomic: they write a temporary file in the target directory and
rename it, so a killed job never leaves a file that looks complete.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import itertools
import json
import lzma
import os
import tempfile
from pathlib import Path
from typing import Collection, Iterable, Iterator, Mapping

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


class FormatError(ValueError):
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
    """`(line number, line)` for the non-blank lines of a (possibly compressed) text file."""
    with open_text(path) as handle:
        for line_no, line in enumerate(handle, start=1):
            line = line.rstrip("\n").rstrip("\r")
            if line.strip():
                yield line_no, line


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w"):
    """Yield a handle to a temporary file that replaces `path` only on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as handle:
            yield handle
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


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


def iter_documents(path: str | os.PathLike) -> Iterator[tuple[str, str]]:
    """Stream `(doc_id, text)` from a JSONL document file (title prepended if present)."""
    for line_no, record in json_objects(path):
        if "id" not in record or "text" not in record:
            raise FormatError(path, line_no, 'expected an object with "id" and "text"')
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


def read_run(path: str | os.PathLike) -> Run:
    run: Run = {}
    for line_no, line in numbered_lines(path):
        parts = line.split()
        if len(parts) != 6:
            raise FormatError(path, line_no, "expected 'qid Q0 docid rank score tag'")
        try:
            score = float(parts[4])
        except ValueError:
            raise FormatError(path, line_no, f"score {parts[4]!r} is not a number") from None
        scores = run.setdefault(parts[0], {})
        if parts[2] in scores:  # trec_eval's behaviour with duplicates is undefined; refuse them
            raise FormatError(path, line_no, f"document {parts[2]} is listed twice for query {parts[0]}")
        scores[parts[2]] = score
    return run


def write_run(path: str | os.PathLike, run: Mapping[str, Mapping[str, float]], tag: str) -> None:
    """Write a TREC run, each query's documents by decreasing score (ties by doc id)."""
    if not tag or any(ch.isspace() for ch in tag):
        raise ValueError(f"run tag {tag!r} must be a non-empty word")
    with atomic_write(path) as out:
        for qid, scores in run.items():
            ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
            for rank, (doc_id, score) in enumerate(ranked, start=1):
                out.write(f"{qid} Q0 {doc_id} {rank} {score:.6f} {tag}\n")


def batched(items: Iterable, size: int) -> Iterator[list]:
    """Consecutive lists of `size` items (the last one shorter), read lazily: a stream never sits in memory."""
    iterator = iter(items)
    while batch := list(itertools.islice(iterator, size)):
        yield batch
