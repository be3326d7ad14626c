"""The FarRelevant stage's jobs: the diagnostic set built from a passage collection (the embedded one:
`source.kind: synthetic`), or from a real source (`farrelevant.source`), built from passages or imported.
"""

from __future__ import annotations

import logging
import random
from pathlib import Path

from tqdm import tqdm

from posbias.backbones import token_counter
from posbias.data import farrelevant, farrelevant_sources
from posbias.errors import InputError
from posbias.farrelevant.jobs import FarRelevantJob
from posbias.io import (read_documents, read_qrels, read_queries, write_documents, write_positions, write_qrels,
                        write_queries)

log = logging.getLogger(__name__)


def build_farrelevant_source(source: dict, settings: dict, tokenizer: str, out_dir: str, queryset: str,
                             train_queryset: str | None = None) -> dict:
    """Write docs.jsonl and the test (and training) query sets' queries, qrels and positions under `out_dir`."""
    builders = {"ir_datasets": farrelevant_sources.build_from_passages, "local": farrelevant_sources.import_local}
    if source["kind"] not in builders:
        raise ValueError(f"farrelevant.source.kind {source['kind']!r} is not built here (one of {sorted(builders)})")
    return builders[source["kind"]](source, settings, tokenizer, out_dir, queryset, train_queryset)


def build_farrelevant(job: FarRelevantJob) -> None:
    """Build FarRelevant documents (one per query) from a passage collection.

    As in the study, documents are built for every query of the passage collection
    (they make up the corpus the first stage searches). The first
    `settings["n_queries"]` queries form the test set `queryset`; with `train_queryset`,
    the next `settings["n_train_queries"]` form a training set (Table 4's fine-tuned setting).
    `negatives` (JSONL of documents) join the corpus unjudged: the embedded generator's hard negatives.
    """
    passages, queries, qrels, settings = job.passages, job.queries, job.qrels, job.settings
    queryset, train_queryset, negatives = job.queryset, job.train_queryset, job.negatives
    texts = read_documents(passages)
    query_texts = read_queries(queries)
    judged = read_qrels(qrels)
    log.info("read %d passages, %d queries and the judgments of %d", len(texts), len(query_texts), len(judged))
    relevant_ids = {pid for per_query in judged.values() for pid, grade in per_query.items() if grade > 0}
    unknown = sorted(relevant_ids - set(texts))
    if unknown:  # checked before anything is written
        raise InputError(f"{qrels}: {len(unknown)} relevant passages are not in {passages}, e.g. {unknown[:3]}")
    pool = [texts[pid] for pid in sorted(texts) if pid not in relevant_ids]
    length = token_counter(job.tokenizer)
    rng = random.Random(settings["seed"])
    documents, doc_qrels, starts = [], {}, {}
    for qid in tqdm(sorted(judged), desc="FarRelevant documents", unit="query", mininterval=10):
        positives = sorted(pid for pid, grade in judged[qid].items() if grade > 0)
        if not positives or qid not in query_texts:
            continue
        doc = farrelevant.build_document(texts[positives[0]], pool, length, rng,
                                         settings["first_window"], settings["max_doc_tokens"])
        doc_id = f"F{qid}"
        documents.append({"id": doc_id, "text": doc.text})
        doc_qrels[qid] = {doc_id: 1}
        starts[qid] = doc.relevant_start
    ordered = sorted(doc_qrels)
    n_test, n_train = settings["n_queries"], settings.get("n_train_queries", 0) if train_queryset else 0
    if len(ordered) < n_test + n_train:
        raise InputError(f"{queries}: {len(ordered)} queries with a relevant passage are too few for "
                         f"{n_test} test and {n_train} training queries")
    splits = {queryset: ordered[:n_test]}
    if train_queryset:
        splits[train_queryset] = ordered[n_test:n_test + n_train]
    out = Path(job.out_dir)
    for name, qids in splits.items():
        write_queries(out / "queries" / f"{name}.tsv", {q: query_texts[q] for q in qids})
        write_qrels(out / "qrels" / f"{name}.txt", {q: doc_qrels[q] for q in qids})
        write_positions(out / "positions" / f"{name}.tsv", {q: starts[q] for q in qids})
    extra = [{"id": doc_id, "text": text} for doc_id, text in read_documents(negatives).items()] if negatives else []
    write_documents(out / "docs.jsonl", documents + extra)
    log.info("built %d FarRelevant documents (%s) and added %d unjudged ones; relevant passages start at "
             "token %d..%d", len(documents), ", ".join(f"{len(q)} {n} queries" for n, q in splits.items()),
             len(extra), min(starts.values()), max(starts.values()))
