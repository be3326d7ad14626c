"""posbias's scorers as PyTerrier transformers, so that a posbias model reranks inside a PyTerrier pipeline and
`pt.Experiment` evaluates it beside other systems.

- `PosbiasReranker` wraps any `posbias.scoring.protocol.Scorer` (a trained ranker, a cross-encoder, a bi-encoder, a
  language model as a pointwise ranker): a results frame in (qid, query, docno, and the documents' `text` or a
  lookup of it), the frame out with the scorer's `score` and its `rank`. Its constructors load what the audit
  loads: a model spec (`from_spec`, `posbias.audit.spec`), a checkpoint `posbias train` wrote (`from_checkpoint`),
  and a cross-encoder read window by window, its windows' scores aggregated (`window_aggregation`, the audit's
  mitigation of that name: zero-shot MaxP).
- `PosbiasCandidates` gives the first stage without Terrier: posbias's Lucene BM25 (pyserini) over an index `posbias
  index` built, or the candidates of a TREC run file, as a results frame, so that `bm25 >> reranker` runs.

Rows are ranked as trec_eval orders them (score descending, ties by docno descending), which is the order posbias's
own evaluation sees (`posbias.evaluation.metrics.trec_eval_order`), and sorted by qid, then rank.
"""

from __future__ import annotations

import os
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from posbias.errors import InputError

try:
    import pyterrier as pt
except ImportError as err:
    if err.name != "pyterrier":  # PyTerrier is there but broken: its own error says how
        raise
    raise InputError("posbias.integrations.pyterrier needs PyTerrier, which is not installed: "
                     "pip install 'posbias[pyterrier]' (or pip install python-terrier)") from None

Docs = Mapping[str, str] | str | os.PathLike  # docno -> text, or a JSONL document file (posbias.io)
RESULT_COLUMNS = ("qid", "query", "docno")


def _texts(docs: Docs, docnos: Sequence[str], where: str) -> list[str]:
    """The text of each docno from `docs` (a mapping, or a JSONL file read for these documents only); a docno it
    lacks is one error naming `where` and a few of them."""
    from posbias.io import read_documents

    wanted = [str(docno) for docno in docnos]
    lookup = docs if isinstance(docs, Mapping) else read_documents(docs, keep=set(wanted))
    missing = sorted({docno for docno in wanted if docno not in lookup})
    if missing:
        source = "the document mapping" if isinstance(docs, Mapping) else os.fspath(docs)
        raise InputError(f"{where}: {len(missing)} documents are not in {source}, e.g. {missing[:3]}")
    return [lookup[docno] for docno in wanted]


def _ranked(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with `rank` (pyterrier's `add_ranks`, from 0 as pyterrier counts), in trec_eval's order within each
    query (score descending, then docno descending) and sorted by qid, then rank."""
    frame = frame.sort_values(["qid", "score", "docno"], ascending=[True, False, False], kind="stable")
    return pt.model.add_ranks(frame).sort_values(["qid", "rank"], kind="stable", ignore_index=True)


class PosbiasReranker(pt.Transformer):
    """Rerank a results frame with a posbias scorer: each row's (query, document text) pair scored by
    `scorer.score`, `batch_size` pairs a call (the scorer batches its forward passes inside a call; a call sees the
    pairs' whole collection, which only the probes' BM25 scorer reads), the frame's `score` and `rank` replaced.

    The text is the frame's `text_field` column, or when the frame has none, looked up by docno in `docs` (a
    mapping, or a posbias JSONL document file, read for the frame's documents only)."""

    def __init__(self, scorer, batch_size: int = 1024, text_field: str = "text", docs: Docs | None = None,
                 progress: bool = False, name: str | None = None):
        if not callable(getattr(scorer, "score", None)):
            raise InputError(f"PosbiasReranker wraps a posbias scorer (posbias.scoring.protocol.Scorer), "
                             f"not a {type(scorer).__name__}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"PosbiasReranker: batch_size must be a positive whole number, got {batch_size!r}")
        self.scorer, self.batch_size, self.text_field, self.docs = scorer, batch_size, text_field, docs
        self.progress = progress
        self.name = name or type(scorer).__name__

    # --- constructors for the common cases -------------------------------------------------------------------
    @classmethod
    def from_spec(cls, spec: str, mitigation: Mapping | str | None = None, device: str | None = None,
                  cache_dir: str | None = None, cache_mode: str | None = None, **options) -> "PosbiasReranker":
        """The pair scorer an audit model spec names (`KIND:TARGET[?options]`, `posbias.audit.spec`: a
        cross-encoder, a bi-encoder, a checkpoint, a language model as a pointwise ranker), loaded as `posbias
        audit` loads it, as the `mitigation` changes it (a mapping or `KIND?key=value&...`,
        `posbias.audit.mitigations`). Device and response cache default to `posbias audit`'s; `options` go to
        `PosbiasReranker`."""
        from posbias.audit import mitigations
        from posbias.audit.jobs import AuditJob
        from posbias.audit.models import load_pair_model
        from posbias.audit.spec import default_name, parse_model_spec

        if isinstance(mitigation, str):
            mitigation = mitigations.parse_mitigation(mitigation)
        ref, _ = mitigations.apply(parse_model_spec(spec), {}, mitigation, where=f"mitigation of {spec!r}")
        scorer = load_pair_model(ref, cache_dir or AuditJob.cache_dir, cache_mode or AuditJob.cache_mode,
                                 device or AuditJob.device)
        name = default_name(ref.kind, ref.target, ref.options) if mitigation else ref.name  # a name of its own
        return cls(scorer, **{"name": name, **options})

    @classmethod
    def from_checkpoint(cls, checkpoint: str, device: str = "auto", batch_size: int = 32,
                        settings: Mapping | None = None, **options) -> "PosbiasReranker":
        """A checkpoint `posbias train` wrote, scoring as the study's reranking does (`RankerScorer`'s defaults:
        precision auto, so bf16 autocast on a GPU and fp32 on a CPU; `settings` changes them) with `batch_size`
        pairs a forward pass; `options` go to `PosbiasReranker`."""
        from posbias.scoring.ranker import RankerScorer

        scorer = RankerScorer.from_checkpoint(checkpoint, device=device, batch_size=batch_size, progress=False,
                                              **dict(settings or {}))
        return cls(scorer, **{"name": f"checkpoint:{checkpoint}", **options})

    @classmethod
    def window_aggregation(cls, spec: str, window: int, stride: int | None = None, aggregate: str = "max",
                           **options) -> "PosbiasReranker":
        """A cross-encoder (`cross-encoder:DIR-OR-HUB-ID`, a FirstP checkpoint once `posbias export-hf` wrote it as
        one) reading each document in windows of `window` tokens every `stride` (the window's by default), the
        windows' scores taken by `aggregate` (max: MaxP; first): the audit's `window_aggregation` mitigation.
        `options` go to `from_spec`."""
        mitigation = {"kind": "window_aggregation", "window": window, "stride": stride, "aggregate": aggregate}
        return cls.from_spec(spec, mitigation=mitigation, **options)

    # --- PyTerrier's face ------------------------------------------------------------------------------------
    def _needed(self) -> list[str]:
        return [*RESULT_COLUMNS, *([self.text_field] if self.docs is None else [])]

    def transform_outputs(self, input_columns: list[str]) -> list[str]:
        """The columns `transform` returns (pyterrier's inspection asks before running a pipeline)."""
        pt.validate.result_frame(input_columns, extra_columns=[c for c in self._needed() if c not in ("qid", "docno")])
        return [*[c for c in input_columns if c not in ("score", "rank")], "score", "rank"]

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        missing = [column for column in self._needed() if column not in inp.columns]
        if missing:
            text = (f"; give the documents' text as a {self.text_field!r} column or as docs= (a mapping or a "
                    f"JSONL file)" if self.text_field in missing else "")
            raise InputError(f"{self!r}: the results frame lacks {', '.join(map(repr, missing))} (its columns: "
                             f"{', '.join(map(str, inp.columns)) or 'none'}){text}")
        if self.text_field in inp.columns:
            texts = inp[self.text_field].astype(str).tolist()
        else:
            texts = _texts(self.docs, inp["docno"].tolist(), repr(self))
        pairs = list(zip(inp["query"].astype(str).tolist(), texts))
        scores = np.empty(len(pairs), dtype=np.float64)
        starts = range(0, len(pairs), self.batch_size)
        if self.progress:
            from tqdm import tqdm

            starts = tqdm(starts, desc=f"scoring with {self.name}", unit="batch")
        for start in starts:
            batch = pairs[start:start + self.batch_size]
            scored = np.asarray(self.scorer.score(batch), dtype=np.float64)
            if scored.shape != (len(batch),):
                raise ValueError(f"{self.name} gave {scored.shape} scores for {len(batch)} pairs")
            scores[start:start + len(batch)] = scored
        return _ranked(inp.drop(columns=["score", "rank"], errors="ignore").assign(score=scores))

    def __repr__(self) -> str:
        return f"PosbiasReranker({self.name})"


class PosbiasCandidates(pt.Transformer):
    """Topics (qid, query) in, first-stage candidates out as a results frame (qid, the topics' columns, docno,
    score, rank, and `text` when `docs` are given), without Terrier: posbias's BM25 (`bm25`) or a run file
    (`from_run`). `search` takes {qid: query} and returns posbias's run form, {qid: {docno: score}}."""

    def __init__(self, search: Callable[[dict[str, str]], Mapping[str, Mapping[str, float]]], name: str,
                 docs: Docs | None = None, needs_query: bool = True):
        self.search, self.name, self.docs, self.needs_query = search, name, docs, needs_query

    @classmethod
    def bm25(cls, index: str, k: int = 100, k1: float = 0.9, b: float = 0.4, threads: int = 1,
             docs: Docs | None = None) -> "PosbiasCandidates":
        """Lucene BM25(k1, b) through pyserini (`posbias.retrieval.bm25.search`) over an index `posbias index`
        built: each query's top `k`."""
        from posbias.retrieval.bm25 import check_index, search

        check_index(index)  # a missing index is refused here, not when the pipeline first runs
        return cls(lambda queries: search(index, queries, k, k1, b, threads), f"bm25({index}, k={k})", docs)

    @classmethod
    def from_run(cls, run: str | os.PathLike, depth: int | None = None, docs: Docs | None = None
                 ) -> "PosbiasCandidates":
        """The candidates of a TREC run file (read as posbias reads runs, `posbias.io.read_run`): each topic's
        documents, its top `depth` in trec_eval's order when given; a topic the run lacks gets none."""
        from posbias.evaluation.metrics import trec_eval_order
        from posbias.io import read_run

        candidates = read_run(run)
        if depth is not None:
            order = trec_eval_order(candidates)  # depth by trec_eval's order, the original scores kept
            candidates = {qid: {d: s for d, s in scores.items() if order[qid][d] > len(scores) - depth}
                          for qid, scores in candidates.items()}
        return cls(lambda queries: {qid: candidates.get(qid, {}) for qid in queries}, f"run({os.fspath(run)})", docs,
                   needs_query=False)

    def _needed(self) -> list[str]:
        return ["qid", *(["query"] if self.needs_query else [])]

    def transform_outputs(self, input_columns: list[str]) -> list[str]:
        """The columns `transform` returns (pyterrier's inspection asks before running a pipeline)."""
        pt.validate.query_frame(input_columns, extra_columns=self._needed()[1:])
        kept = [c for c in input_columns if c not in ("docno", "score", "rank", "text")]
        return [*kept, "docno", "score", "rank", *(["text"] if self.docs is not None else [])]

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        missing = [column for column in self._needed() if column not in topics.columns]
        if missing:
            raise InputError(f"{self!r}: the topics frame lacks {', '.join(map(repr, missing))} (its columns: "
                             f"{', '.join(map(str, topics.columns)) or 'none'})")
        topics = topics.drop(columns=["docno", "score", "rank", "text"], errors="ignore").drop_duplicates("qid")
        queries = dict(zip(topics["qid"].astype(str), topics["query"].astype(str) if "query" in topics else
                           [""] * len(topics)))
        found = self.search(queries)
        rows = [(qid, docno, float(score)) for qid in queries for docno, score in found.get(qid, {}).items()]
        frame = pd.DataFrame(rows, columns=["qid", "docno", "score"]).astype({"qid": str, "docno": str,
                                                                               "score": "float64"})
        frame = topics.astype({"qid": str}).merge(frame, on="qid", how="inner")
        if self.docs is not None:
            frame["text"] = _texts(self.docs, frame["docno"].tolist(), repr(self))
        return _ranked(frame)

    def __repr__(self) -> str:
        return f"PosbiasCandidates.{self.name}"
