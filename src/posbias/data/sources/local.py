"""A user's own collection files, each possibly compressed (`.gz`, `.bz2`, `.xz`).

Documents are JSONL or TSV, told apart by the name (`.jsonl`/`.json` or `.tsv`, before any compression suffix):

- JSONL: one object per line with an id (`id`, or `doc_id`/`docid`/`_id` as written by BEIR, Pyserini and
  ir_datasets exports), a text (`text`, or `contents`/`body`) and optionally a `title`, which is prepended;
- TSV: `id<TAB>text` or `id<TAB>title<TAB>text`.

Queries (TSV), qrels (TREC) and an optional precomputed run (TREC) use the readers of `posbias.io`.
Every malformed line is a `posbias.io.FormatError` naming the file and the line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from posbias import io
from posbias.data.sources import SourceError
from posbias.io import FormatError, json_objects, numbered_lines

ID_FIELDS = ("id", "doc_id", "docid", "_id")
TEXT_FIELDS = ("text", "contents", "body")
FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".tsv": "tsv"}


def file_format(path: str | os.PathLike) -> str:
    """`jsonl` or `tsv`, from the file name with any compression suffix set aside."""
    name = Path(path)
    if name.suffix in (".gz", ".bz2", ".xz"):
        name = name.with_suffix("")
    if name.suffix not in FORMATS:
        raise SourceError(f"{path}: cannot tell the format from the name; expected one of "
                          f"{sorted(FORMATS)}, optionally followed by .gz, .bz2 or .xz")
    return FORMATS[name.suffix]


def _first_field(record: dict, fields: tuple[str, ...]) -> str | None:
    return next((name for name in fields if name in record), None)


def _jsonl_documents(path: str | os.PathLike) -> Iterator[dict]:
    for line_no, record in json_objects(path):
        id_field, text_field = _first_field(record, ID_FIELDS), _first_field(record, TEXT_FIELDS)
        if id_field is None or text_field is None:
            raise FormatError(path, line_no, f"expected an id field (one of {ID_FIELDS}) "
                                             f"and a text field (one of {TEXT_FIELDS})")
        doc_id, text = str(record[id_field]), record[text_field]
        if not doc_id or not isinstance(text, str):
            raise FormatError(path, line_no, "the id must be non-empty and the text a string")
        title = record.get("title")
        yield {"id": doc_id, "text": f"{title} {text}" if title else text}


def _tsv_documents(path: str | os.PathLike) -> Iterator[dict]:
    for line_no, line in numbered_lines(path):
        parts = line.split("\t")
        if len(parts) not in (2, 3) or not parts[0]:
            raise FormatError(path, line_no, f"expected 'id<TAB>text' or 'id<TAB>title<TAB>text', "
                                             f"found {len(parts)} tab-separated fields")
        doc_id, *title, text = parts
        yield {"id": doc_id, "text": f"{title[0]} {text}" if title and title[0] else text}


def documents(path: str | os.PathLike) -> Iterator[dict]:
    """Yield `{"id", "text"}` for each document, streaming, so a corpus need not fit in memory."""
    reader = _jsonl_documents if file_format(path) == "jsonl" else _tsv_documents
    yield from reader(path)


def queries(path: str | os.PathLike) -> dict[str, str]:
    """`{qid: text}` from a `qid<TAB>text` file."""
    return io.read_queries(path)


def qrels(path: str | os.PathLike) -> io.Qrels:
    """`{qid: {doc_id: grade}}` from a TREC qrels file."""
    return io.read_qrels(path)


def run(path: str | os.PathLike) -> io.Run:
    """`{qid: {doc_id: score}}` from a precomputed TREC run (for example BM25 top-100 to rerank)."""
    return io.read_run(path)
