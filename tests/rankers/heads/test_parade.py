import math

import pytest
import torch

from posbias.rankers.features import ChunkFeatures
from posbias.rankers.heads.parade import ParadeAttention, ParadeDimAttention, ParadePooling

HEADS = {"avg": lambda h, p=0.0: ParadePooling(h, "mean", p), "max": lambda h, p=0.0: ParadePooling(h, "max", p),
         "attn": lambda h, p=0.0: ParadeAttention(h, p), "attn_per_dim": lambda h, p=0.0: ParadeDimAttention(h, p)}


@pytest.mark.parametrize("name", HEADS)
def test_padding_chunks_never_change_the_score(name, check_padding_chunks_never_change_the_score):
    check_padding_chunks_never_change_the_score(HEADS[name](8))


@pytest.mark.parametrize("name", HEADS)
def test_head_dropout_acts_on_the_pooled_vector(name, check_head_dropout):
    check_head_dropout(lambda p: HEADS[name](64, p))


def test_parade_attention_weights_are_a_softmax_over_valid_chunks():
    attention = ParadeAttention(2)
    with torch.no_grad():
        attention.query_vector.copy_(torch.tensor([1.0, 0.0]))
    vectors = torch.tensor([[[0.0, 0.0], [1.0, 0.0], [5.0, 5.0]]])
    weights = attention.chunk_weights(vectors, torch.tensor([[True, True, False]]))
    e = math.e
    assert weights[0].tolist() == pytest.approx([1 / (1 + e), e / (1 + e), 0.0])
    # one scalar weight per chunk from one learned vector
    assert attention.query_vector.shape == (2,)


def test_parade_pooling_pools_valid_chunks_element_wise():
    vectors = torch.tensor([[[1.0, 4.0], [3.0, 0.0], [9.0, 9.0]]])
    mask = torch.tensor([[True, True, False]])
    for mode, expected in (("mean", [2.0, 2.0]), ("max", [3.0, 4.0])):
        head = ParadePooling(2, mode)
        seen = []
        head.score.register_forward_pre_hook(lambda module, inputs: seen.append(inputs[0]))
        head(ChunkFeatures(vectors, mask))
        assert seen[0][0].tolist() == expected


def test_per_dimension_attention_is_a_softmax_over_valid_chunks_in_each_dimension():
    attention = ParadeDimAttention(2)
    with torch.no_grad():
        attention.attention.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 2.0]]))
        attention.attention.bias.copy_(torch.tensor([0.0, 1.0]))
    vectors = torch.tensor([[[0.0, 1.0], [1.0, 0.0], [7.0, 7.0]]])
    weights = attention.chunk_weights(vectors, torch.tensor([[True, True, False]]))
    e = math.e
    # dimension 0: logits 0 and 1; dimension 1: logits 3 and 1; the padding chunk gets nothing
    assert weights[0, :, 0].tolist() == pytest.approx([1 / (1 + e), e / (1 + e), 0.0])
    assert weights[0, :, 1].tolist() == pytest.approx([e ** 2 / (1 + e ** 2), 1 / (1 + e ** 2), 0.0])
    seen = []
    attention.score.register_forward_pre_hook(lambda module, inputs: seen.append(inputs[0]))
    attention.eval()(ChunkFeatures(vectors, torch.tensor([[True, True, False]])))
    assert seen[0][0].tolist() == pytest.approx([e / (1 + e), e ** 2 / (1 + e ** 2)])


def test_parade_attn_takes_the_paper_s_scalar_or_the_authors_per_dimension_attention(tiny_backbone):
    from posbias.errors import InputError
    from posbias.rankers.registry import build_ranker

    geometry = dict(backbone=tiny_backbone, max_query_tokens=6, chunk_tokens=8, stride=6, max_doc_tokens=24)
    assert isinstance(build_ranker("parade_attn", geometry).head, ParadeAttention)
    ranker = build_ranker("parade_attn", {**geometry, "attention": "per_dim"})
    assert isinstance(ranker.head, ParadeDimAttention) and ranker.args["attention"] == "per_dim"
    with pytest.raises(InputError, match=r"attention 'vector' is not one of \['per_dim', 'scalar'\]"):
        build_ranker("parade_attn", {**geometry, "attention": "vector"})
