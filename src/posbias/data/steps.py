"""The data stage's jobs: collections in the standard formats, generated or read from a source, truncated, de-biased
and tokenised."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from tqdm import tqdm

from posbias.backbones import load_tokenizer, token_counter
from posbias.data.synthetic import GeneratorSettings, generate
from posbias.data.vocabulary import vocabulary_entity_words
from posbias.data.answer_passages import write_answer_passages
from posbias.data.sources import SourceError
from posbias.io import (document_records, read_folds, write_documents, write_folds, write_positions, write_qrels,
                        write_queries)

log = logging.getLogger(__name__)


def generate_synthetic(settings: dict, tokenizer: str, out_dir: str, passages_dir: str) -> None:
    """Write the embedded collection (train/dev/test) and the FarRelevant passage collection."""
    words = None if tokenizer == "whitespace" else vocabulary_entity_words(load_tokenizer(tokenizer))
    collection = generate(GeneratorSettings.from_config(settings), token_counter(tokenizer), words)
    out, pas = Path(out_dir), Path(passages_dir)
    for name, queries in collection.queries.items():
        write_queries(out / "queries" / f"{name}.tsv", queries)
        write_qrels(out / "qrels" / f"{name}.txt", collection.qrels[name])
        write_positions(out / "positions" / f"{name}.tsv", collection.answer_starts[name])
    write_documents(pas / "docs.jsonl", collection.passages)
    write_queries(pas / "queries" / "farrelevant.tsv", collection.passage_queries)
    write_qrels(pas / "qrels" / "farrelevant.txt", collection.passage_qrels)
    write_documents(pas / "negatives.jsonl", collection.passage_negatives)
    # The answering passages and their offsets, for the first-relevant-position analysis (posbias.positions)
    write_answer_passages(out / "passages", collection.answer_passages)
    # The document file last: it is the output downstream rules key on.
    write_documents(out / "docs.jsonl", ({"id": d.doc_id, "text": d.text} for d in collection.documents))
    log.info("wrote %d documents, queries %s, and %d FarRelevant passages", len(collection.documents),
             {k: len(v) for k, v in collection.queries.items()}, len(collection.passages))


# --- collections read from a source --------------------------------------------------------------

def _read(source: dict, what: str):
    """`documents`, `queries` or `qrels` from a config source block (`kind`: ir_datasets, hf or local)."""
    from posbias.data.sources import hf, irds, local

    kind = source["kind"]
    if kind == "ir_datasets":
        if what == "documents":
            from posbias.staging.irds import verify_manual

            verify_manual(source["id"], source.get("manual_sha256"), f"the source's manual_sha256 ({source['id']})")
        return getattr(irds, what)(source["id"], *([] if what == "qrels" else [source.get("fields")]))
    if kind == "hf":
        options = {k: source[k] for k in ("name", "context_lengths", "revision", "cache_dir", "data_files")
                   if k in source}
        return getattr(hf, what)(source["path"], **options)
    return getattr(local, what)(source["path" if what == "documents" else what])


def fetch_documents(source: dict, out: str) -> None:
    """Write a source's documents as JSONL (`source` is a `collections.<name>.documents` block)."""
    count = write_documents(out, _read(source, "documents"))
    log.info("wrote %d documents from %s source to %s", count, source["kind"], out)


def fetch_queryset(source: dict, queries_out: str, qrels_out: str) -> None:
    """Write a query set's queries TSV and qrels; queries without judgments are kept out (nothing to evaluate)."""
    texts, judged = _read(source, "queries"), _read(source, "qrels")
    unknown = sorted(set(judged) - set(texts))
    if unknown:
        log.warning("%d judged queries have no text and are left out (first: %s)", len(unknown), unknown[:5])
    kept = {q: texts[q] for q in texts if q in judged}
    if not kept:
        raise SourceError(f"{source['kind']} source {source}: no query has both a text and judgments")
    log.info("query set: %d of %d queries have judgments", len(kept), len(texts))
    write_qrels(qrels_out, {q: judged[q] for q in kept})
    write_queries(queries_out, kept)


def fetch_folds(folds: list[str] | str, out: str) -> None:
    """Write `qid<TAB>fold` from ir_datasets fold subsets (one id per fold) or a user's file."""
    from posbias.data.sources import irds

    assignment = irds.folds(folds) if isinstance(folds, list) else read_folds(folds)
    write_folds(out, assignment)
    sizes = {f: sum(1 for v in assignment.values() if v == f) for f in sorted(set(assignment.values()))}
    log.info("folds (queries per fold): %s", sizes)


def truncate_documents(docs: str, out: str, tokenizer: str, max_tokens: int) -> None:
    """The rankers' copy of a collection: each document cut to its first `max_tokens` tokens."""
    from posbias.data.truncation import truncate_documents as truncate

    truncate(docs, out, tokenizer, max_tokens)


def debias_collection(docs: str, out: str, n_splits: int, seed: int) -> None:
    """The de-biased copy of a collection (`posbias.data.debias`), streamed: every document, whole, reordered."""
    from posbias.data.debias import debias_documents

    records = tqdm(document_records(docs), desc="de-biasing", unit="doc", mininterval=10)
    count = write_documents(out, debias_documents(records, seed, n_splits))
    log.info("de-biased %d documents of %s (%d split%s per document, seed %d)", count, docs, n_splits,
             "s" * (n_splits != 1), seed)


def tokenize_documents(docs: str, out_dir: str, tokenizer: str, cap: int | None, trust_remote_code: bool = False,
                       threads: int = 1) -> None:
    """Tokenise a collection once into a token store (`posbias.data.token_store`) for the rankers."""
    from posbias.data.token_store import build_token_store

    # The fast tokenizer's batch calls use this many threads (Rust rayon).
    os.environ.setdefault("RAYON_NUM_THREADS", str(threads))
    build_token_store(docs, out_dir, tokenizer, cap, trust_remote_code)
