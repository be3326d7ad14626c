"""doc2query expansions: predicted queries appended to each document's text.

An expansion file is, possibly compressed (`.gz`, `.bz2`, `.xz`):

- JSONL (`.jsonl`/`.json`): `{"id": ..., "predicted_queries": [...]}` (the doc2query-T5 release format) or
  `{"id": ..., "expansion": "..."}`;
- TSV (`.tsv`): `id<TAB>expansion text`.

A document may appear on several lines (for example one sampled query per line); its pieces are joined
in file order. Every malformed line is a `posbias.io.FormatError` naming the file and the line.
"""

from __future__ import annotations

import logging
import os
from typing import Iterable, Iterator, Mapping

from posbias.data.sources.local import file_format
from posbias.io import FormatError, json_objects, numbered_lines

log = logging.getLogger(__name__)


def _jsonl_expansion(path: str | os.PathLike, line_no: int, record: dict) -> tuple[str, str]:
    if "id" not in record:
        raise FormatError(path, line_no, 'expected an object with "id"')
    if "predicted_queries" in record:
        predicted = record["predicted_queries"]
        if not isinstance(predicted, list) or not all(isinstance(q, str) for q in predicted):
            raise FormatError(path, line_no, '"predicted_queries" must be a list of strings')
        return str(record["id"]), " ".join(predicted)
    if isinstance(record.get("expansion"), str):
        return str(record["id"]), record["expansion"]
    raise FormatError(path, line_no, 'expected "predicted_queries" (a list) or "expansion" (a string)')


def _tsv_expansion(path: str | os.PathLike, line_no: int, line: str) -> tuple[str, str]:
    doc_id, tab, text = line.partition("\t")
    if not tab or not doc_id or "\t" in text:
        raise FormatError(path, line_no, "expected 'id<TAB>expansion text'")
    return doc_id, text


def read_expansions(path: str | os.PathLike) -> dict[str, str]:
    """`{doc_id: expansion text}` from a JSONL or TSV expansion file."""
    if file_format(path) == "jsonl":
        records = (_jsonl_expansion(path, line_no, record) for line_no, record in json_objects(path))
    else:
        records = (_tsv_expansion(path, line_no, line) for line_no, line in numbered_lines(path))
    pieces: dict[str, list[str]] = {}
    for doc_id, text in records:
        pieces.setdefault(doc_id, []).append(text)
    return {doc_id: " ".join(" ".join(parts).split()) for doc_id, parts in pieces.items()}


def expand(documents: Iterable[Mapping], expansions: Mapping[str, str]) -> Iterator[dict]:
    """Yield each document with its expansion appended to its text; documents without one pass unchanged.

    How many documents had no expansion is logged once the documents are exhausted.
    """
    total = unexpanded = 0
    for doc in documents:
        total += 1
        expansion = expansions.get(doc["id"])
        if expansion:
            yield {**doc, "text": f"{doc['text']} {expansion}"}
        else:
            unexpanded += 1
            yield dict(doc)
    log.info("doc2query: %d of %d documents had no expansion and are unchanged", unexpanded, total)
    if total and unexpanded == total and expansions:
        log.warning("doc2query: no document id matched any of the %d expansions; are the ids the same?",
                    len(expansions))
