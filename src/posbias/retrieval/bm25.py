"""BM25 with Lucene through pyserini: build an index, retrieve top-k candidates."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Mapping

from tqdm import tqdm

from posbias.data.sources.expansions import expand
from posbias.errors import InfrastructureError, InputError
from posbias.io import atomic_directory, iter_documents
from posbias.retrieval.jvm import prepare_jvm

log = logging.getLogger(__name__)


def build_index(docs_path: str, index_dir: str, threads: int = 1, expansions: Mapping[str, str] | None = None,
                batch_size: int = 10_000) -> int:
    """Index a JSONL document file with Lucene; returns the number of documents.

    Documents are streamed in batches to Anserini's indexer, which spreads each batch
    over `threads` Java threads, so a collection never has to fit in memory.
    `expansions` (doc2query text by doc id) are appended to their documents'
    indexed text only. The index is built in a hidden sibling directory and
    renamed when complete (`posbias.io.atomic_directory`), so an interrupted job never leaves an index that
    looks finished.
    """
    prepare_jvm(threads)
    from pyserini.index.lucene import LuceneIndexer

    with atomic_directory(index_dir) as staging:
        indexer = LuceneIndexer(str(staging), threads=threads)
        documents = ({"id": doc_id, "text": text} for doc_id, text in iter_documents(docs_path))
        if expansions is not None:
            documents = expand(documents, expansions)
        count, batch = 0, []
        for doc in tqdm(documents, desc="indexing", unit="doc", mininterval=10):
            batch.append(json.dumps({"id": doc["id"], "contents": doc["text"]}))
            if len(batch) == batch_size:
                indexer.add_batch_raw(batch)
                count, batch = count + len(batch), []
        if batch:
            indexer.add_batch_raw(batch)
            count += len(batch)
        indexer.close()
        if not count:  # raised inside the staging block: no empty index is left behind
            raise InputError(f"{docs_path}: no documents to index: the file is empty")
        if not any(staging.glob("segments_*")):
            # Anserini logs a failed write (a full disk, above all) and raises nothing: the index is unusable
            free = shutil.disk_usage(staging).free / 1e9
            raise InfrastructureError(f"{index_dir}: Lucene ended without writing its segments_N file, so the index "
                                      f"is unusable (its error is in the log above; a full disk is the usual cause: "
                                      f"{free:.1f} GB free there)")
    log.info("indexed %d documents from %s into %s with %d threads", count, docs_path, index_dir, threads)
    return count


def check_index(index_dir: str) -> None:
    """A Lucene index is a directory with a `segments_N` file; anything else is an `InputError` naming it,
    found before the JVM starts (Lucene's own error is a Java stack trace)."""
    root = Path(index_dir)
    if not root.is_dir():
        raise InputError(f"{index_dir}: no such Lucene index (build one with `posbias index`)")
    if not any(root.glob("segments_*")):
        raise InputError(f"{index_dir} is not a Lucene index: it has no segments_N file")


def search(index_dir: str, queries: Mapping[str, str], k: int, k1: float, b: float,
           threads: int = 1, batch_size: int = 256) -> dict[str, dict[str, float]]:
    """Retrieve the top-k documents per query with Lucene BM25(k1, b)."""
    check_index(index_dir)
    prepare_jvm(threads)
    from pyserini.pyclass import JArrayList, autoclass

    # Anserini's searcher, as pyserini's LuceneSearcher builds and calls it: importing that class's module
    # also imports every neural query encoder pyserini has (torch, transformers, scikit-learn, the OpenAI
    # client), about 5 s per job, for a search that is pure Lucene.
    searcher = autoclass("io.anserini.search.SimpleSearcher")(str(index_dir))
    searcher.set_bm25(float(k1), float(b))
    qids = list(queries)
    run: dict[str, dict[str, float]] = {}
    for start in tqdm(range(0, len(qids), batch_size), desc="BM25", unit="batch", mininterval=5):
        batch, texts, ids = qids[start:start + batch_size], JArrayList(), JArrayList()
        for qid in batch:
            texts.add(queries[qid])
            ids.add(qid)
        found = searcher.batch_search(texts, ids, int(k), int(threads))
        hits = {entry.getKey(): entry.getValue() for entry in found.entrySet().toArray()}
        for qid in batch:
            run[qid] = {hit.docid: float(hit.score) for hit in hits.get(qid, [])}
    empty = sum(1 for scores in run.values() if not scores)
    if empty:
        log.warning("%d of %d queries retrieved no document", empty, len(run))
    return run
