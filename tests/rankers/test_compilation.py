"""`training.compile` / `rerank.compile`: the backbone compiled by torch.compile's default backend (inductor, which
generates and builds C++ kernels here with gcc) gives the eager scores and gradients up to float rounding.

With a cold inductor cache this file took 2 min on this project's 2-core machine beside other jobs (43 CPU-seconds;
the bare backbone's first forward and backward alone, 66 s), and 34 s once inductor's on-disk cache under /tmp holds
the kernels: it is marked slow. (Backend "aot_eager" would take 18 s but only traces: no kernel is generated.)
"""

import pytest
import torch

from posbias.rankers.compilation import compiled_backbone
from posbias.rankers.features import ChunkFeatures
from posbias.rankers.registry import build_ranker

pytestmark = pytest.mark.slow  # over a minute with a cold inductor cache: `make test` starts this file first

QUERY = [2054, 2003, 1996, 3007]


def scores_and_gradients(ranker, batch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    ranker.zero_grad(set_to_none=True)
    scores = ranker(batch).view(-1, 2)
    torch.clamp(1.0 - scores[:, 0] + scores[:, 1], min=0).sum().backward()  # the pairwise margin loss
    return scores.detach().float(), {n: p.grad.float() for n, p in ranker.named_parameters() if p.grad is not None}


def largest_error(results, reference) -> tuple[float, float]:
    """The largest difference of the scores, and of any gradient entry, each over the reference's largest entry."""
    (scores, gradients), (reference_scores, reference_gradients) = results, reference
    assert gradients.keys() == reference_gradients.keys()
    scale = max(float(g.abs().max()) for g in reference_gradients.values())
    return (float((scores - reference_scores).abs().max() / reference_scores.abs().max()),
            max(float((gradients[n] - reference_gradients[n]).abs().max()) for n in gradients) / scale)


def test_compiled_and_eager_scores_and_gradients_agree(tiny_backbone, tokenizer, monkeypatch):
    """fp32 on a CPU, dropout off, MaxP on the tiny BERT (2 layers, 32 wide): a batch's scores and one step's gradients
    of every parameter, eager and compiled. Scores within 1e-5 of the largest; gradients within 1e-3 of the largest
    entry, and no further from an fp64 eager run than 2x the eager fp32 run is (measured: the two fp32 runs 2.0e-4
    apart, eager 1.7e-4 and compiled 1.1e-4 from fp64: this random model's gradients are small sums that cancel, and
    inductor fuses and reorders them). A batch of other shapes runs in the graphs made (dynamic shapes), and the
    backbone is eager again after, its state-dict keys unchanged."""
    torch.manual_seed(0)
    ranker = build_ranker("maxp", dict(backbone=tiny_backbone, max_query_tokens=6, chunk_tokens=8, stride=8,
                                       max_doc_tokens=24, dropout=0.0)).train()
    chunker = ranker.featurizer(tokenizer)
    docs = [list(range(3000, 3000 + n)) for n in (21, 5, 13, 9)]  # 3, 1, 2 and 2 windows of unequal lengths
    batch = chunker.batch([(QUERY, doc) for doc in docs])
    other = chunker.batch([(QUERY[:2], doc[:7]) for doc in docs[:2]])  # other rows and widths
    keys = list(ranker.state_dict())

    eager = scores_and_gradients(ranker, batch)
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    with compiled_backbone(ranker, True):
        compiled = scores_and_gradients(ranker, batch)
        graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
        scores_and_gradients(ranker, other)
        # compiled, not silently eager; the other batch's sizes ran in the graphs made (a group of one chunk has a
        # graph of its own: sizes 0 and 1 are never made symbolic)
        assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == graphs >= 1
    assert list(ranker.state_dict()) == keys and ranker.encoder.backbone._compiled_call_impl is None

    monkeypatch.setattr(ChunkFeatures, "float", lambda features: features)  # the head in fp64 too
    exact = scores_and_gradients(ranker.double(), batch)

    score_error, gradient_error = largest_error(compiled, eager)
    eager_rounding, compiled_rounding = largest_error(eager, exact)[1], largest_error(compiled, exact)[1]
    print(f"compiled vs eager: scores within {score_error:.1e}, gradients within {gradient_error:.1e} of the largest; "
          f"from fp64: eager {eager_rounding:.1e}, compiled {compiled_rounding:.1e}")
    assert score_error <= 1e-5 and gradient_error <= 1e-3
    assert compiled_rounding <= 2 * eager_rounding


def test_rerank_compile_compiles_the_backbone_while_it_scores(tiny_backbone, tokenizer, token_store, inside_context):
    """`rerank.compile` reaches `compiled_backbone` with the ranker, and every batch is scored inside it."""
    from posbias.scoring import ranker as scoring
    from posbias.scoring.reranking import rerank

    entered, batches_inside = inside_context(scoring, "compiled_backbone", "score_batch")
    ranker = build_ranker("maxp", dict(backbone=tiny_backbone, max_query_tokens=6, chunk_tokens=8, stride=8,
                                       max_doc_tokens=24)).eval()
    store = token_store({"a": "short text", "b": "a much longer document about zorvia and its capital city"})
    scorer = scoring.RankerScorer(ranker, tokenizer, batch_size=1, device="cpu", progress=False, compile=True)
    rerank(scorer, {"q1": "capital of zorvia"}, store, {"q1": {"a": 1.0, "b": 0.5}})
    assert entered == [True, "left"] and batches_inside == [True, True]
