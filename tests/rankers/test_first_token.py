import pytest
import torch

from posbias.rankers.chunking import ChunkGeometry, Chunker
from posbias.rankers.encoder import load_backbone
from posbias.rankers.first_token import first_token_states, supports_first_token_only


def _inputs(tokenizer):
    chunker = Chunker(tokenizer, ChunkGeometry(max_query_tokens=4, chunk_tokens=6, stride=6, max_doc_tokens=6,
                                               pad_query=True))
    batch = chunker.batch([([1101, 1102], list(range(2000, 2006))), ([1201], [2100, 2101])])
    return {"input_ids": batch.input_ids[:, 0], "attention_mask": batch.attention_mask[:, 0],
            "token_type_ids": batch.token_type_ids[:, 0]}


def test_the_first_token_alone_matches_the_full_forward(tiny_backbones, tokenizer):
    backbone = load_backbone(tiny_backbones).eval()
    assert supports_first_token_only(backbone)
    inputs = _inputs(tokenizer)  # padding at the end and, with pad_query, masked slots inside
    if backbone.config.model_type == "roberta":
        inputs.pop("token_type_ids")
    with torch.no_grad():
        full = backbone(**inputs).last_hidden_state[:, 0]
        first = first_token_states(backbone, inputs)
    assert torch.allclose(first, full, atol=1e-5)
    assert len(backbone.encoder.layer) == backbone.config.num_hidden_layers  # the last layer is put back


def test_gradients_reach_every_layer_through_the_first_token(tiny_backbone, tokenizer):
    backbone = load_backbone(tiny_backbone).train()
    first = first_token_states(backbone, _inputs(tokenizer))
    torch.manual_seed(0)  # not .sum(): the sum of a LayerNorm's outputs hardly depends on its input
    (first * torch.randn_like(first)).sum().backward()
    last = backbone.encoder.layer[-1]
    for module in (backbone.encoder.layer[0], last.attention.self.key, last.attention.self.query, last.output):
        assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in module.parameters())


@pytest.mark.parametrize("change", [{"is_decoder": True}, {"position_embedding_type": "relative_key"}])
def test_layers_it_cannot_reproduce_keep_the_full_forward(tiny_backbone, change):
    backbone = load_backbone(tiny_backbone)
    for key, value in change.items():
        setattr(backbone.config, key, value)
    assert not supports_first_token_only(backbone)
