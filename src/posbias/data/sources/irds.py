"""Collections from ir_datasets, read with its own loaders.

ir_datasets downloads into `IR_DATASETS_HOME` (default `~/.ir_datasets`) on
first use and reads from there afterwards; the tests place small files in each
dataset's own on-disk format there, so this code runs offline unchanged. With
POSBIAS_OFFLINE=1 a part whose files are not all there is refused at once,
naming the file and `posbias stage` (posbias.staging.irds).

Text comes from the record's `default_text()` (for example title and body for
MS MARCO documents, title for Robust04 topics) unless the config names the
fields to join, such as `[description]` for Robust04 description queries.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Iterable, Iterator, Sequence

from tqdm import tqdm

from posbias.data.sources import SourceError
from posbias.staging.irds import require_staged  # offline, a part not staged is refused before ir_datasets waits

log = logging.getLogger(__name__)


def load(dataset_id: str):
    """The ir_datasets dataset object; an unknown id is a `SourceError`."""
    import ir_datasets

    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise SourceError(f"ir_datasets has no dataset {dataset_id!r}") from None


def _text(record: Any, fields: Sequence[str] | None, what: str) -> str:
    if fields:
        missing = [f for f in fields if f not in record._fields]
        if missing:
            raise SourceError(f"{what}: fields {missing} are not among {list(record._fields)}")
        parts = [getattr(record, f) for f in fields]
    else:
        parts = [record.default_text()]
    # One line per record in our formats: collapse every run of whitespace.
    return " ".join(" ".join(str(p) for p in parts if p).split())


def _file_of(handler: Any, kind: str) -> str:
    """The local file behind a docs/queries/qrels handler, when ir_datasets exposes it."""
    inner = getattr(handler, f"_{kind}_handler", None)  # a filtered subset such as ".../judged" wraps the reader
    if inner is not None:
        return f"{_file_of(inner, kind)} (filtered to the subset's ids, which a judged subset takes from its qrels)"
    getter = getattr(handler, f"{kind}_path", None)
    if getter is None and hasattr(handler, "_dlc"):  # MS MARCO v2 documents know their file only via their download
        getter = functools.partial(handler._dlc.path, force=False)  # force=False: name the file rather than fetch it
    if getter is None:
        return "its files under IR_DATASETS_HOME"
    try:
        return str(getter())
    except Exception:  # some handlers need a download to tell; the record number still locates the error
        return "its files under IR_DATASETS_HOME"


def file_of(dataset_id: str, kind: str) -> str:
    """The local file behind a dataset's `docs`, `queries` or `qrels`, for messages about their content."""
    dataset = load(dataset_id)
    return _file_of(getattr(dataset, f"{kind}_handler")(), kind)


def _guarded(records: Iterable, dataset_id: str, kind: str, handler: Any) -> Iterator:
    """Re-raise a parse error of ir_datasets as a SourceError naming the dataset, file and record."""
    number = 0
    try:
        for number, record in enumerate(records, start=1):
            yield record
    except SourceError:
        raise
    except Exception as err:
        raise SourceError(f"{dataset_id}: {_where(kind, number, err)} could not be read from "
                          f"{_file_of(handler, kind)}: {type(err).__name__}: {err}") from err


def _where(kind: str, number: int, err: Exception) -> str:
    """The failing record by number and, where the error keeps it (JSON errors do), by its line."""
    where = f"{kind} record {number + 1}"
    if kind == "docs" and not number:  # ir_datasets may read every document first (BEIR builds its docstore so)
        where += " (or a later one, if ir_datasets read them all first to build a docstore)"
    line = getattr(err, "doc", None)
    return where + (f", at {line.strip()[:80]!r}," if isinstance(line, str) else "")


def _iterate_docs(dataset: Any) -> Iterator:
    # Called lazily, inside _guarded: BEIR's docs_iter() reads (and may fail on) the whole corpus at once.
    yield from dataset.docs_iter()


def documents(dataset_id: str, fields: Sequence[str] | None = None, progress: bool = True) -> Iterator[dict]:
    """Yield `{"id", "text"}` for every document of the dataset."""
    require_staged(dataset_id, "docs")
    dataset = load(dataset_id)
    if not dataset.has_docs():
        raise SourceError(f"ir_datasets {dataset_id!r} has no documents")
    handler = dataset.docs_handler()
    total = None
    try:
        total = dataset.docs_count()
    except Exception:  # a count needs metadata some datasets only have after a download
        pass
    records = tqdm(_iterate_docs(dataset), desc=f"{dataset_id} docs", unit="doc", total=total, mininterval=10,
                   disable=not progress)
    for doc in _guarded(records, dataset_id, "docs", handler):
        yield {"id": doc.doc_id, "text": _text(doc, fields, f"{dataset_id} docs")}


def queries(dataset_id: str, fields: Sequence[str] | None = None) -> dict[str, str]:
    """`{qid: text}`; queries whose text is empty after joining the fields are dropped with a warning."""
    require_staged(dataset_id, "queries")
    dataset = load(dataset_id)
    if not dataset.has_queries():
        raise SourceError(f"ir_datasets {dataset_id!r} has no queries")
    result, empty = {}, []
    for query in _guarded(dataset.queries_iter(), dataset_id, "queries", dataset.queries_handler()):
        text = _text(query, fields, f"{dataset_id} queries")
        if text:
            result[query.query_id] = text
        else:
            empty.append(query.query_id)
    if empty:
        log.warning("%s: %d queries have no text in fields %s and are left out (first: %s)",
                    dataset_id, len(empty), fields, empty[:5])
    return result


def qrels(dataset_id: str) -> dict[str, dict[str, int]]:
    """`{qid: {doc_id: grade}}` from the dataset's judgments."""
    require_staged(dataset_id, "qrels")
    dataset = load(dataset_id)
    if not dataset.has_qrels():
        raise SourceError(f"ir_datasets {dataset_id!r} has no relevance judgments")
    result: dict[str, dict[str, int]] = {}
    for judgment in _guarded(dataset.qrels_iter(), dataset_id, "qrels", dataset.qrels_handler()):
        result.setdefault(judgment.query_id, {})[judgment.doc_id] = int(judgment.relevance)
    return result


def folds(fold_ids: Sequence[str]) -> dict[str, int]:
    """`{qid: fold number}` (1-based, in the order given) from one ir_datasets subset per fold."""
    assignment: dict[str, int] = {}
    for number, fold_id in enumerate(fold_ids, start=1):
        require_staged(fold_id, "queries")
        dataset = load(fold_id)
        for query in _guarded(dataset.queries_iter(), fold_id, "queries", dataset.queries_handler()):
            if query.query_id in assignment:
                raise SourceError(f"{fold_id}: query {query.query_id} is already in fold {assignment[query.query_id]}")
            assignment[query.query_id] = number
    return assignment
