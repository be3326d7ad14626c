"""The bias probes' scorers of probe documents, each a `posbias.scoring.protocol.Scorer` (spec §1.4).

- `dense`: a bi-encoder, the kind the study probes. Query and document models may differ (Dragon's do); vectors are
  CLS- or mean-pooled, scored by a raw dot product as in the study (`score: dot`) or by cosine (`score: cosine`).
  Texts are truncated at `max_tokens` (the study: 512, for queries and documents alike). Each model tokenises its
  own side; the study tokenises both with the query model's tokenizer, which for every pair it probes is the same
  vocabulary.
- `bm25`: Lucene BM25 (pyserini). A probe's own documents (both sides of every pair, each distinct text once) are
  the collection its statistics come from, so a probe's scores do not depend on which other probes run.
- `checkpoint`: a ranker posbias trained (`posbias train`) used as a cross-encoder, reading what its geometry
  reads (FirstP: the first chunk only): `posbias.scoring.ranker.RankerScorer`, which reranks the study's runs.

A scorer takes every (query, document) item of one probe in one call (`score`), so it can encode each distinct
text once and see the probe's whole collection. `truncated` says which documents the scorer cannot read whole:
the evidence of an "evidence last" document may be cut off, which the report counts.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from posbias.errors import InputError
from posbias.scoring.protocol import Pair, Scorer, distinct

KINDS = ("dense", "bm25", "checkpoint")
SCORES = ("dot", "cosine")


class DenseScorer(Scorer):
    def __init__(self, query_model: str, doc_model: str | None = None, pooling: str = "cls", score: str = "dot",
                 max_tokens: int = 512, batch_size: int = 32, device: str = "auto", precision: str = "fp32",
                 trust_remote_code: bool = False):
        from posbias.retrieval.dense import DenseEncoder

        if score not in SCORES:
            raise InputError(f"probes.scorers: score must be one of {SCORES}, got {score!r}")
        settings = dict(pooling=pooling, max_query_tokens=max_tokens, max_passage_tokens=max_tokens,
                        batch_size=batch_size, device=device, trust_remote_code=trust_remote_code,
                        normalize=score == "cosine", precision=precision)
        self.max_tokens = max_tokens
        self.query_encoder = DenseEncoder(query_model, **settings)
        self.doc_encoder = (self.query_encoder if doc_model in (None, query_model)
                            else DenseEncoder(doc_model, **settings))
        # Vectors by text, kept across calls: the probes share documents (every original document is in the
        # heatmap), and a text's vector does not depend on its batch (`DenseEncoder`).
        self._queries: dict[str, np.ndarray] = {}
        self._documents: dict[str, np.ndarray] = {}

    def score(self, pairs: Sequence[Pair], metas: Sequence[Mapping] | None = None) -> np.ndarray:
        queries = self._vectors([q for q, _ in pairs], self._queries, self.query_encoder.encode_queries)
        documents = self._vectors([d for _, d in pairs], self._documents, self.doc_encoder.encode_passages)
        return np.einsum("ij,ij->i", queries.astype(np.float64), documents.astype(np.float64))

    @staticmethod
    def _vectors(texts: list[str], cache: dict[str, np.ndarray], encode: Callable) -> np.ndarray:
        new = [text for text in dict.fromkeys(texts) if text not in cache]
        if new:
            cache.update(zip(new, encode(new)))
        return np.stack([cache[text] for text in texts]) if texts else np.empty((0, 0), dtype=np.float32)

    def truncated(self, documents: Sequence[str]) -> np.ndarray:
        if not documents:
            return np.zeros(0, dtype=bool)
        ids = self.doc_encoder.tokenizer(list(documents), add_special_tokens=True, verbose=False)["input_ids"]
        return np.array([len(row) > self.max_tokens for row in ids], dtype=bool)


class BM25Scorer(Scorer):
    def __init__(self, k1: float = 0.9, b: float = 0.4):
        self.k1, self.b = float(k1), float(b)

    def score(self, pairs: Sequence[Pair], metas: Sequence[Mapping] | None = None) -> np.ndarray:
        from posbias.retrieval.bm25 import build_index
        from posbias.retrieval.hybrid import bm25_scores

        queries, query_rows = distinct([q for q, _ in pairs])
        documents, doc_rows = distinct([d for _, d in pairs])
        qid, docid = (lambda row: f"q{row}"), (lambda row: f"d{row}")
        candidates: dict[str, dict[str, float]] = {}
        for q, d in zip(query_rows, doc_rows):
            candidates.setdefault(qid(q), {})[docid(d)] = 0.0
        with tempfile.TemporaryDirectory(prefix="posbias-probe-bm25-") as work:
            docs = Path(work) / "docs.jsonl"
            with docs.open("w", encoding="utf-8") as handle:
                for row, text in enumerate(documents):
                    handle.write(json.dumps({"id": docid(row), "text": text}) + "\n")
            build_index(str(docs), str(Path(work) / "index"))
            run = bm25_scores(str(Path(work) / "index"), {qid(row): text for row, text in enumerate(queries)},
                              candidates, self.k1, self.b)
        return np.array([run[qid(q)][docid(d)] for q, d in zip(query_rows, doc_rows)], dtype=np.float64)


def build_scorer(spec: Mapping, checkpoint: str | None = None) -> Scorer:
    """The scorer a `probes.scorers.<name>` section describes; a `checkpoint` one scores with the checkpoint
    directory given (the workflow resolves its model and seed to a path)."""
    options = {key: value for key, value in spec.items() if key not in ("kind", "label", "model", "seed")}
    kind = spec.get("kind")
    if kind == "dense":
        return DenseScorer(**options)
    if kind == "bm25":
        return BM25Scorer(**options)
    if kind == "checkpoint":
        if checkpoint is None:
            raise InputError("probes.scorers: a checkpoint scorer needs the checkpoint directory of its model")
        from posbias.scoring.ranker import RankerScorer

        # full fp32, eager linear layers, as every probe scorer (RankerScorer's docstring)
        return RankerScorer.from_checkpoint(checkpoint, **{"precision": "fp32", "tf32": False, "onednn": False,
                                                           **options})
    raise InputError(f"probes.scorers: kind must be one of {KINDS}, got {kind!r}")
