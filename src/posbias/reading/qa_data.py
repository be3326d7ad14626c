"""The authors' multi-document QA files (spec §2.1): one JSON object per line, gzipped, with `question`,
`answers` (the NQ-Open list the metric scores against), `ctxs` (the documents in prompt order) and, in the
files built from retrieval results, `nq_annotated_gold`.

Gold documents lack `id`, `score` and `original_retrieval_index` (quirk 8): `model_document` fills every
missing field with None, as the authors' `Document.from_dict` does, and parses `score` (a string in their files)
with `float`. A record that cannot be used is an `InputError` naming `path:line` and the field.
"""

from __future__ import annotations

import math
import os
from typing import Iterator, Mapping

from posbias.errors import InputError
from posbias.io import FormatError, json_objects, nonempty

# The fields of a document as the authors' code holds it (their `Document` dataclass), in its order.
DOCUMENT_FIELDS = ("title", "text", "id", "score", "hasanswer", "isgold", "original_retrieval_index")


def qa_records(path: str | os.PathLike, require_gold: bool = False) -> Iterator[tuple[int, dict]]:
    """`(line number, record)` for each checked record; `require_gold`: each must have `nq_annotated_gold`
    with a `title` and a `chunked_long_answer` (the builder's input)."""
    for line_no, record in json_objects(path):
        try:
            check_qa_record(record, require_gold)
        except InputError as err:
            raise FormatError(path, line_no, str(err)) from None
        yield line_no, record


def read_qa_records(path: str | os.PathLike, require_gold: bool = False, limit: int | None = None) -> list[dict]:
    """The checked records of a QA file (the first `limit` of them, if given); an empty file is an error."""
    records = []
    for _, record in qa_records(path, require_gold):
        if limit is not None and len(records) >= limit:
            break
        records.append(record)
    return nonempty(records, path, "questions")


def check_qa_record(record: Mapping, require_gold: bool = False) -> None:
    """Raise an `InputError` naming the first field of `record` that the QA stage cannot use."""
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        raise InputError(f'"question" must be a non-empty string, not {question!r}')
    answers = record.get("answers")
    if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
        raise InputError(f'"answers" must be a non-empty list of strings, not {answers!r}')
    ctxs = record.get("ctxs")
    if not isinstance(ctxs, list):
        raise InputError(f'"ctxs" must be a list of documents, not {type(ctxs).__name__}')
    for i, ctx in enumerate(ctxs):
        _check_document(ctx, f"ctxs[{i}]")
    if sum(ctx.get("isgold") is True for ctx in ctxs) > 1:
        raise InputError('"ctxs" holds more than one document with "isgold": true')
    if require_gold:
        gold = record.get("nq_annotated_gold")
        if not isinstance(gold, dict):
            raise InputError('"nq_annotated_gold" is missing: the builder takes the gold document from it')
        for key in ("title", "chunked_long_answer"):
            if not isinstance(gold.get(key), str):
                raise InputError(f'"nq_annotated_gold.{key}" must be a string, not {gold.get(key)!r}')


def _check_document(ctx, where: str) -> None:
    if not isinstance(ctx, dict):
        raise InputError(f"{where} must be an object, not {type(ctx).__name__}")
    for key in ("title", "text"):
        if not isinstance(ctx.get(key), str):
            raise InputError(f'{where}.{key} must be a string, not {ctx.get(key)!r}')
    score = ctx.get("score")
    if score is not None:
        try:
            value = float(score)
        except (TypeError, ValueError):
            value = math.nan
        if isinstance(score, bool) or not math.isfinite(value):
            raise InputError(f"{where}.score {score!r} is not a finite number")
    for key in ("hasanswer", "isgold"):
        if ctx.get(key) is not None and not isinstance(ctx[key], bool):
            raise InputError(f"{where}.{key} must be true, false or absent, not {ctx[key]!r}")
    index = ctx.get("original_retrieval_index")
    if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
        raise InputError(f"{where}.original_retrieval_index must be a non-negative integer, not {index!r}")


def model_document(ctx: Mapping) -> dict:
    """A document as the authors' code holds it and writes it to `model_documents`: every field of
    `DOCUMENT_FIELDS`, missing ones None, `score` a float."""
    document = {key: ctx.get(key) for key in DOCUMENT_FIELDS}
    if document["score"] is not None:
        document["score"] = float(document["score"])
    return document


def gold_position(ctxs: list[Mapping]) -> int | None:
    """The 0-based index of the gold document (`isgold: true`), None if there is none (closed book, or
    retrieval results read as they are)."""
    return next((i for i, ctx in enumerate(ctxs) if ctx.get("isgold") is True), None)
