import pytest
import torch
from torch import nn

from posbias.rankers.encoder import load_backbone
from posbias.scoring.ranker import RankerScorer
from posbias.scoring.reranking import rerank
from posbias.rankers.onednn import OneDNNLinear, onednn_available, onednn_linears
from posbias.rankers.registry import build_ranker

pytestmark = pytest.mark.skipif(not onednn_available(torch.device("cpu"), None), reason="no oneDNN in this torch")


def _inputs():
    torch.manual_seed(0)
    ids = torch.randint(1000, 2000, (3, 9))
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0
    return {"input_ids": ids, "attention_mask": mask}


def test_the_backbone_gives_the_eager_states_and_gets_its_own_layers_back(tiny_backbones):
    backbone = load_backbone(tiny_backbones).eval()
    linears = [name for name, module in backbone.named_modules() if type(module) is nn.Linear]
    state = {key: value.clone() for key, value in backbone.state_dict().items()}
    with torch.inference_mode():
        eager = backbone(**_inputs()).last_hidden_state
        with onednn_linears(backbone) as swapped:
            assert swapped == len(linears)
            fused = [m for m in backbone.modules() if isinstance(m, OneDNNLinear) and m.gelu]
            assert len(fused) == backbone.config.num_hidden_layers  # each intermediate block's GELU fused in
            fast = backbone(**_inputs()).last_hidden_state
    assert torch.allclose(fast, eager, atol=1e-5)
    assert [name for name, module in backbone.named_modules() if type(module) is nn.Linear] == linears
    assert not any(isinstance(m, (OneDNNLinear, nn.Identity)) for m in backbone.modules())
    assert all(torch.equal(state[key], value) for key, value in backbone.state_dict().items())


def test_gradients_fall_back_to_the_eager_product(tiny_backbone):
    backbone = load_backbone(tiny_backbone).train()
    with onednn_linears(backbone):
        backbone(**_inputs()).last_hidden_state.sum().backward()
    assert all(p.grad is not None for p in backbone.encoder.layer[-1].intermediate.parameters())


def test_rerank_scores_with_and_without_onednn_agree(tiny_backbone, tokenizer, token_store):
    torch.manual_seed(0)
    ranker = build_ranker("firstp", dict(backbone=tiny_backbone, max_query_tokens=6, chunk_tokens=8, stride=8,
                                         max_doc_tokens=8)).eval()
    store = token_store({"a": "short text", "b": " ".join(["a longer document"] * 4), "c": "zorvia capital"})
    queries, candidates = {"q": "capital of zorvia"}, {"q": {"a": 0, "b": 0, "c": 0}}
    fast, _ = rerank(RankerScorer(ranker, tokenizer, device="cpu", progress=False), queries, store, candidates)
    eager, _ = rerank(RankerScorer(ranker, tokenizer, device="cpu", onednn=False, progress=False), queries, store,
                      candidates)
    assert all(abs(fast["q"][d] - eager["q"][d]) < 1e-5 for d in eager["q"])
    assert not any(isinstance(m, OneDNNLinear) for m in ranker.modules())
