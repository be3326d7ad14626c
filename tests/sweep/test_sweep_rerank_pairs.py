"""A sweep asks one question of the same distractors at every position: reranking scores each (query text,
document) pair once and gives every query sharing the text the same scores, on its own candidates only."""

from __future__ import annotations

import torch

from posbias.scoring.ranker import RankerScorer
from posbias.scoring.reranking import rerank
from posbias.rankers.registry import build_ranker

DOCS = {"a": "short text", "b": " ".join(["a much longer document"] * 8), "c": "zorvia capital mendal",
        "v0": "zorvia capital mendal and more", "v1": "more and zorvia capital mendal"}


def test_shared_query_texts_are_scored_once(tiny_backbone, tokenizer, token_store):
    torch.manual_seed(0)
    ranker = build_ranker("maxp", dict(backbone=tiny_backbone, max_query_tokens=6, chunk_tokens=8, stride=8,
                                       max_doc_tokens=24)).eval()
    store = token_store(DOCS)
    queries = {"q@p0": "capital of zorvia", "q@p1": "capital of zorvia", "other": "founder of brel"}
    candidates = {"q@p0": {"a": 2.0, "b": 1.0, "v0": 0.5}, "q@p1": {"a": 2.0, "b": 1.0, "v1": 0.5},
                  "other": {"a": 1.0, "c": 0.5}}
    scorer = RankerScorer(ranker, tokenizer, batch_size=2, device="cpu", progress=False)
    run, info = rerank(scorer, queries, store, candidates)
    assert {q: set(s) for q, s in run.items()} == {q: set(s) for q, s in candidates.items()}
    assert info["pairs"] == 8 and info["scored_pairs"] == 6  # a and b once for both positions
    assert run["q@p0"]["a"] == run["q@p1"]["a"] and run["q@p0"]["b"] == run["q@p1"]["b"]
    alone, alone_info = rerank(scorer, queries, store, {"q@p1": candidates["q@p1"]})
    assert "scored_pairs" not in alone_info  # nothing shared: the info is what it always was
    assert all(abs(alone["q@p1"][d] - run["q@p1"][d]) < 1e-5 for d in candidates["q@p1"])
