import torch

from posbias.rankers.inference import rerank
from posbias.rankers.registry import build_ranker


def test_rerank_scores_every_candidate_the_same_as_one_at_a_time(tiny_backbone, tokenizer):
    torch.manual_seed(0)
    ranker = build_ranker("maxp", dict(backbone=tiny_backbone, max_query_tokens=6, chunk_tokens=8, stride=8,
                                       max_doc_tokens=24)).eval()
    queries = {"q1": "capital of zorvia", "q2": "founder of brel"}
    docs = {"a": "short text", "b": " ".join(["a much longer document"] * 8), "c": "zorvia capital mendal"}
    candidates = {"q1": {"a": 1.0, "b": 0.5, "c": 0.1}, "q2": {"b": 3.0, "c": 1.0}}
    run = rerank(ranker, tokenizer, queries, docs, candidates, batch_size=2, device="cpu", progress=False)
    assert {q: set(s) for q, s in run.items()} == {q: set(s) for q, s in candidates.items()}
    single = rerank(ranker, tokenizer, queries, docs, {"q1": {"b": 0.0}}, batch_size=1, device="cpu",
                    progress=False)
    assert abs(single["q1"]["b"] - run["q1"]["b"]) < 1e-5
