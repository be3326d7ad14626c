"""Reranking query sets' candidate files with a ranker posbias builds (`scoring.ranker.RankerScorer`): what the
training, fine-tuning, cross-validation and rerank jobs share, the position sweep's reranking included.

Document token ids are read from a token store one batch at a time, the pairs sorted by the length the ranker reads
(then query and document id, so that a run's batches do not depend on the candidates' order). How the run was
scored (device, autocast, pairs, seconds of scoring) is written beside it as `<run>.json`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from posbias.data.token_store import TokenStore
from posbias.errors import InputError
from posbias.io import atomic_write, nonempty, read_queries, read_run, write_run

if TYPE_CHECKING:
    from posbias.scoring.ranker import RankerScorer, TokenPair

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reranking:
    """Query sets one ranker reranks: aligned lists of token stores, queries and candidates, where each run goes,
    the runs' tag and how they are scored (the config's `rerank` section without its query sets: `batch_size`,
    `device`, `precision`, `tf32`, `compile`, `packing`, the arguments of a `RankerScorer`)."""

    tokens: list[str]
    queries: list[str]
    candidates: list[str]
    runs: list[str]
    tag: str
    scoring: Mapping

    def scorer(self, ranker, tokenizer, progress: bool = True) -> "RankerScorer":
        """The scorer these query sets are reranked with: `ranker` as `scoring` says."""
        from posbias.scoring.ranker import RankerScorer

        return RankerScorer(ranker, tokenizer, progress=progress, **self.scoring)


class _StoredPairs(Sequence):
    """(query token ids, document token ids) pairs whose documents are read from the token store when asked for."""

    def __init__(self, query_ids: list, numbers: list[int], store: TokenStore, limit: int):
        self.query_ids, self.numbers, self.store, self.limit = query_ids, numbers, store, limit

    def __len__(self) -> int:
        return len(self.numbers)

    def __getitem__(self, i: int) -> "TokenPair":
        return self.query_ids[i], self.store.ids(self.numbers[i], self.limit)


def rerank(scorer: "RankerScorer", queries: dict[str, str], store: TokenStore, candidates: dict[str, dict[str, float]],
           source: str = "the candidates", memo: dict | None = None) -> tuple[dict[str, dict[str, float]], dict]:
    """A run with the scorer's score for every (query, candidate) pair, and how it was computed (`scorer.run_info()`,
    `pairs`, `scoring_seconds`). `source` names the candidates (their file) in errors: a query without text, a
    document not in the store. `memo`, shared by the calls of one ranker, holds the scores by (query text, the
    document's token ids as the ranker reads them): a pair another query set already scored is taken from it (the
    position sweep's distractors are FarRelevant's documents)."""
    missing_queries = sorted(set(candidates) - set(queries))
    if missing_queries:
        raise InputError(f"{len(missing_queries)} queries of {source} have no text, e.g. {missing_queries[:3]}")
    limit = scorer.window
    store.check_tokenizer(scorer.tokenizer, limit)
    qids = sorted(candidates)
    query_ids = dict(zip(qids, scorer.chunker.tokenize_queries([queries[q] for q in qids])))
    # A (query text, document) pair is scored once however many queries share it (a position sweep asks the same
    # question of the same distractors at every position); the first query with that text stands for the rest.
    by_text = {}
    for q in qids:
        by_text.setdefault(queries[q], q)
    wanted = [(q, d) for q in qids for d in candidates[q]]
    scored = sorted({(by_text[queries[q]], d) for q, d in wanted})
    pair_queries = [q for q, _ in scored]
    pair_docs = [d for _, d in scored]
    numbers = store.numbers(pair_docs, what=f"candidate documents of {source}")
    lengths = np.minimum(store.counts[numbers], limit)
    order = sorted(range(len(pair_docs)), key=lambda i: (lengths[i], pair_queries[i], pair_docs[i]))
    pair_scores: dict[tuple[str, str], float] = {}
    memo_keys = {}
    if memo is not None:
        memo_keys = {i: (queries[pair_queries[i]], np.asarray(store.ids(numbers[i], limit)).tobytes()) for i in order}
        for i in order:
            if memo_keys[i] in memo:
                pair_scores[pair_queries[i], pair_docs[i]] = memo[memo_keys[i]]
        order = [i for i in order if memo_keys[i] not in memo]
    seconds_before = scorer.seconds
    scores = scorer.score_token_pairs(_StoredPairs([query_ids[pair_queries[i]] for i in order],
                                                   [numbers[i] for i in order], store, limit)).tolist()
    for i, score in zip(order, scores):
        pair_scores[pair_queries[i], pair_docs[i]] = score
        if memo is not None:
            memo[memo_keys[i]] = score
    run: dict[str, dict[str, float]] = {q: {} for q in qids}
    for q, d in wanted:
        run[q][d] = pair_scores[by_text[queries[q]], d]
    reused = len(scored) - len(order)
    info = {**scorer.run_info(), "pairs": len(wanted), "scoring_seconds": round(scorer.seconds - seconds_before, 4),
            **({"scored_pairs": len(order)} if len(order) < len(wanted) else {}),
            **({"reused_pairs": reused} if reused else {})}
    log.info("reranked %d pairs of %d queries with %s on %s (backbone autocast %s, head fp32)%s%s", len(wanted),
             len(qids), scorer.ranker.registry_name, scorer.device, info["autocast"],
             f"; {len(order)} distinct (query text, document) pairs scored" if len(order) < len(wanted) else "",
             f", {reused} taken from an earlier query set" if reused else "")
    return run, info


def write_rerank_info(run: str, info: dict) -> None:
    """Record how a run was scored (device, autocast dtype, pairs) next to it, as `<run>.json`."""
    with atomic_write(f"{run}.json") as out:
        json.dump(info, out, indent=2, sort_keys=True)
        out.write("\n")


def rerank_with(scorer: "RankerScorer", reranking: Reranking, keep_qids: set[str] | None = None) -> None:
    """Rerank each (token store, queries, candidates) triple of `reranking` into its run file (and `<run>.json`,
    how it was scored) with `scorer` (`reranking.scorer(...)`). `keep_qids` limits the queries."""
    memo: dict = {}  # one ranker's scores across the query sets (`rerank`)
    for tokens_path, queries_path, candidates_path, run in zip(reranking.tokens, reranking.queries,
                                                                reranking.candidates, reranking.runs, strict=True):
        log.info("reranking %s", candidates_path)
        pool = nonempty(read_run(candidates_path), candidates_path, "candidates")
        if keep_qids is not None:
            pool = {q: scores for q, scores in pool.items() if q in keep_qids}
        with TokenStore(tokens_path) as store:
            scores, info = rerank(scorer, read_queries(queries_path), store, pool, source=candidates_path, memo=memo)
        write_run(run, scores, tag=reranking.tag)
        write_rerank_info(run, {**info, "candidates": candidates_path, "precision": scorer.precision})
