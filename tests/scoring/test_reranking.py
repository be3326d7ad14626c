import json

import torch

from posbias.rankers.chunking import Chunker
from posbias.scoring.ranker import RankerScorer
from posbias.scoring.reranking import Reranking, rerank
from posbias.rankers.registry import build_ranker

QUERIES = {"q1": "capital of zorvia", "q2": "founder of brel"}
DOCS = {"a": "short text", "b": " ".join(["a much longer document"] * 8), "c": "zorvia capital mendal"}


def scorer(ranker, tokenizer, batch_size: int = 32) -> RankerScorer:
    return RankerScorer(ranker, tokenizer, batch_size=batch_size, device="cpu", progress=False)


def maxp(backbone):
    torch.manual_seed(0)
    return build_ranker("maxp", dict(backbone=backbone, max_query_tokens=6, chunk_tokens=8, stride=8,
                                     max_doc_tokens=24)).eval()


def test_rerank_scores_every_candidate_the_same_as_one_at_a_time(tiny_backbone, tokenizer, token_store):
    ranker, store = maxp(tiny_backbone), token_store(DOCS)
    candidates = {"q1": {"a": 1.0, "b": 0.5, "c": 0.1}, "q2": {"b": 3.0, "c": 1.0}}
    run, info = rerank(scorer(ranker, tokenizer, batch_size=2), QUERIES, store, candidates)
    assert {q: set(s) for q, s in run.items()} == {q: set(s) for q, s in candidates.items()}
    seconds = info.pop("scoring_seconds")  # featurisation and forward passes, timed in process (Figure 3)
    assert info == {"device": "cpu", "autocast": "fp32", "pairs": 5} and 0 < seconds < 60
    single, _ = rerank(scorer(ranker, tokenizer, batch_size=1), QUERIES, store, {"q1": {"b": 0.0}})
    assert abs(single["q1"]["b"] - run["q1"]["b"]) < 1e-5


def test_a_memo_takes_the_pairs_another_query_set_scored_and_scores_only_the_rest(tiny_backbone, tokenizer,
                                                                                  token_store):
    """The position sweep asks FarRelevant's questions of FarRelevant's documents, in another collection under other
    ids: a pair is known by its query text and the document's token ids, not by the ids of either."""
    ranker = maxp(tiny_backbone)
    first, second = token_store(DOCS, name="first"), token_store({"x": DOCS["b"], "y": "a new text"}, name="second")
    memo: dict = {}
    run1, _ = rerank(scorer(ranker, tokenizer), QUERIES, first, {"q1": {"a": 0, "b": 0}}, memo=memo)
    sweep_queries = {"s1": QUERIES["q1"], "s2": QUERIES["q2"]}
    candidates = {"s1": {"x": 0, "y": 0}, "s2": {"x": 0}}
    run2, info = rerank(scorer(ranker, tokenizer), sweep_queries, second, candidates, memo=memo)
    # (q1's text, b's tokens) came from the memo; (q1, y) and (q2, b's tokens) were scored
    assert info["reused_pairs"] == 1 and info["scored_pairs"] == 2 and len(memo) == 4
    assert run2["s1"]["x"] == run1["q1"]["b"]
    fresh, _ = rerank(scorer(ranker, tokenizer), sweep_queries, second, candidates)
    assert all(abs(fresh[q][d] - run2[q][d]) < 1e-5 for q in candidates for d in candidates[q])


def test_a_store_with_a_smaller_cap_than_the_ranker_reads_is_refused(tiny_backbone, tokenizer, token_store):
    import pytest

    with pytest.raises(ValueError, match="keeps 10 tokens per document, but the ranker reads 24"):
        rerank(scorer(maxp(tiny_backbone), tokenizer), QUERIES, token_store(DOCS, cap=10), {"q1": {"a": 1.0}})


def test_scores_from_a_bf16_backbone_come_from_an_fp32_head(tiny_backbone, tokenizer):
    """Under bf16 autocast the backbone's matrix products run in bf16, but the head must not round scores
    to bf16's 8 significant bits (at depth 100 that tied a third of the queries' top 11)."""
    ranker = maxp(tiny_backbone)
    with torch.no_grad():
        ranker.head.score.weight.normal_(std=3.0)  # scores spread over several binades
    chunker = Chunker(tokenizer, ranker.geometry)
    query = tokenizer("capital of zorvia", add_special_tokens=False)["input_ids"]
    docs = [tokenizer(f"document number {i} says {'words ' * i}", add_special_tokens=False)["input_ids"]
            for i in range(16)]
    batch = chunker.batch([(query, doc) for doc in docs])
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        scores = ranker(batch)
        head_under_autocast = ranker.head(ranker.encoder(batch))
    assert scores.dtype == torch.float32
    on_bf16_grid = scores == scores.to(torch.bfloat16).float()
    assert on_bf16_grid.sum() <= 2, scores  # full-precision scores, not bf16 values
    # The same head left under autocast would have quantised them: what the test guards against.
    assert head_under_autocast.dtype == torch.bfloat16
    assert len(set(scores.tolist())) == len(docs)


def test_rerank_info_is_recorded_next_to_the_run(tiny_backbone, tokenizer, token_store, tmp_path):
    from posbias.io import write_queries, write_run
    from posbias.rankers.checkpoint import save_checkpoint
    from posbias.rerank.steps import rerank_candidates

    ranker, store = maxp(tiny_backbone), token_store(DOCS)
    save_checkpoint(ranker, tokenizer, tmp_path / "ckpt")
    write_queries(tmp_path / "q.tsv", QUERIES)
    write_run(tmp_path / "cand.run", {"q1": {"a": 1.0, "c": 0.5}}, tag="bm25")
    run = tmp_path / "out.run"
    reranking = Reranking([str(store.directory)], [str(tmp_path / "q.tsv")], [str(tmp_path / "cand.run")],
                          [str(run)], "t", {"batch_size": 4, "device": "cpu"})
    rerank_candidates(str(tmp_path / "ckpt"), reranking, threads=1, progress=False)
    info = json.loads((tmp_path / "out.run.json").read_text())
    assert info["autocast"] == "fp32" and info["device"] == "cpu" and info["pairs"] == 2
    assert info["precision"] == "auto"
    assert len(run.read_text().splitlines()) == 2
