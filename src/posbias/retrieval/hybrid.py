"""The hybrid first stage: dense k-NN candidates re-scored by a fusion of BM25 and cosine scores.

For each query: encode it, take the top-k documents of the FAISS index by
cosine, compute the exact Lucene BM25(k1, b) score of each of those
(query, document) pairs, and fuse the two lists (`posbias.retrieval.fusion`).
The FAISS index records the encoder that made its vectors, and searching it
with an encoder that would make different vectors is an error. It also records
where and in which precision they were computed (e.g. cuda, fp16); queries
encoded otherwise (e.g. on a CPU in fp32, the usual case) get a warning only.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Mapping

import faiss
from tqdm import tqdm

from posbias.errors import InputError
from posbias.retrieval import faiss_index
from posbias.retrieval.bm25 import check_index
from posbias.retrieval.dense import DenseEncoder
from posbias.retrieval.encoder_settings import EncoderSettings
from posbias.retrieval.fusion import check_weight, fuse
from posbias.retrieval.jvm import prepare_jvm

log = logging.getLogger(__name__)

Run = dict[str, dict[str, float]]


def hybrid_search(queries: Mapping[str, str], dense_index_dir: str, lucene_index_dir: str,
                  encoder_settings: Mapping, k: int, k1: float, b: float, weight: float,
                  threads: int | None = None) -> Run:
    """`{qid: {doc_id: fused score}}` over each query's k nearest documents; `weight` is BM25's share. `threads`,
    the job's, sizes the JVM (`posbias.retrieval.jvm.prepare_jvm`)."""
    check_weight(weight)
    check_index(lucene_index_dir)  # both indexes are checked before the encoder is loaded
    check_same_settings(dense_index_dir, EncoderSettings.from_config(encoder_settings))
    encoder = DenseEncoder.from_config(encoder_settings)
    warn_if_other_numerics(dense_index_dir, encoder)
    index, doc_ids = faiss_index.load(dense_index_dir)
    cosine = dense_candidates(encoder, index, doc_ids, queries, k)
    bm25 = bm25_scores(lucene_index_dir, queries, cosine, k1, b, threads)
    return fuse(bm25, cosine, weight)


def check_same_encoder(dense_index_dir: str, encoder: DenseEncoder) -> None:
    """Different encoder settings are an error; a different device or precision is a warning."""
    check_same_settings(dense_index_dir, encoder.settings)
    warn_if_other_numerics(dense_index_dir, encoder)


def check_same_settings(dense_index_dir: str, settings: EncoderSettings) -> None:
    """An index is queried with the encoder settings it was built with (checked before the encoder loads)."""
    metadata = faiss_index.load_metadata(dense_index_dir)
    # An index recorded before a setting existed was built with that setting's default.
    defaults = {field.name: field.default for field in dataclasses.fields(EncoderSettings)
                if field.default is not dataclasses.MISSING}
    recorded = {**defaults, **metadata.get("encoder", {})}
    differing = _differences(recorded, settings.vector_identity())
    if differing:
        raise InputError(f"{dense_index_dir} was built with a different encoder ({differing}); rebuild it or "
                         "use the same encoder settings")


def warn_if_other_numerics(dense_index_dir: str, encoder: DenseEncoder) -> None:
    """Queries encoded on another device or at another precision than the documents: a warning, since querying
    a GPU-built index on a CPU is normal (cosines then differ in their last digits)."""
    metadata = faiss_index.load_metadata(dense_index_dir)
    # Indexes from before numerics were recorded have none: nothing to compare.
    numerics = _differences(metadata["numerics"], encoder.numerics()) if "numerics" in metadata else ""
    if numerics:
        log.warning("%s: queries are encoded differently from its documents (%s); cosines may differ slightly "
                    "from those of queries encoded the same way", dense_index_dir, numerics)


def _differences(index: Mapping, query: Mapping) -> str:
    """`key: index X vs query Y` for each key of `query` whose value the index does not share."""
    return ", ".join(f"{key}: index {index.get(key)!r} vs query {query[key]!r}"
                     for key in sorted(query) if index.get(key) != query[key])


def dense_candidates(encoder: DenseEncoder, index: faiss.Index, doc_ids: list[str],
                     queries: Mapping[str, str], k: int) -> Run:
    """`{qid: {doc_id: cosine}}` for the k nearest documents of each query."""
    qids = list(queries)
    if not qids:
        return {}
    vectors = encoder.encode_queries([queries[qid] for qid in qids])
    scores, positions = faiss_index.search(index, vectors, k)
    return {qid: {doc_ids[pos]: float(score) for score, pos in zip(scores[row], positions[row]) if pos >= 0}
            for row, qid in enumerate(qids)}


def bm25_scores(lucene_index_dir: str, queries: Mapping[str, str], candidates: Mapping[str, Mapping],
                k1: float, b: float, threads: int | None = None) -> Run:
    """Exact Lucene BM25(k1, b) scores of each query's candidate documents (0 where no query term occurs).

    pyserini scores one (query, document) pair per call; one reader and one similarity serve all calls.
    """
    check_index(lucene_index_dir)
    prepare_jvm(threads)
    from pyserini.index.lucene import LuceneIndexReader
    from pyserini.pyclass import autoclass

    reader = LuceneIndexReader(str(lucene_index_dir))
    # What pyserini.search.lucene.LuceneSimilarities.bm25 builds, without that module's ~10 s of imports.
    similarity = autoclass("org.apache.lucene.search.similarities.BM25Similarity")(float(k1), float(b))
    run: Run = {}
    for qid, docs in tqdm(candidates.items(), desc="BM25 scores", unit="query", mininterval=5):
        run[qid] = {doc_id: _pair_score(reader, similarity, queries[qid], doc_id, lucene_index_dir)
                    for doc_id in docs}
    return run


def _pair_score(reader, similarity, query: str, doc_id: str, lucene_index_dir: str) -> float:
    score = float(reader.compute_query_document_score(doc_id, query, similarity))
    # pyserini returns 0 both for "no query term in the document" and "no such document": tell them apart.
    if score == 0.0 and reader.convert_collection_docid_to_internal_docid(doc_id) < 0:
        raise InputError(f"document {doc_id!r} is a dense candidate but is not in the Lucene index {lucene_index_dir}")
    return score
