import math

import pytest
import torch

from posbias.rankers.features import ChunkFeatures
from posbias.rankers.heads.model1 import EPSILON, NeuralModel1

HIDDEN = 8


def features(query, doc, query_mask, doc_mask, pooled=None) -> ChunkFeatures:
    """Last-layer token states ([batch, length, hidden]) as the encoder hands them ([batch, 1 layer, ...])."""
    pooled = torch.zeros(query.shape[0], 1, HIDDEN) if pooled is None else pooled
    return ChunkFeatures(pooled, torch.ones(query.shape[0], pooled.shape[1], dtype=torch.bool),
                         query.unsqueeze(1), query_mask, doc.unsqueeze(1), doc_mask)


def test_log_likelihood_of_a_two_by_two_case():
    translation = torch.tensor([[[0.5, 0.1], [0.2, 0.4]]])  # T(q_i | d_j)
    both = torch.tensor([[True, True]])
    score = NeuralModel1.log_likelihood(translation, both, both)
    assert score.item() == pytest.approx(math.log(0.3 + EPSILON) + math.log(0.3 + EPSILON))
    # P(d|D) is uniform over real document tokens; padded query tokens add nothing
    score = NeuralModel1.log_likelihood(translation, torch.tensor([[True, False]]), torch.tensor([[True, False]]))
    assert score.item() == pytest.approx(math.log(0.5 + EPSILON))


def test_score_is_the_model1_formula_on_the_projections():
    torch.manual_seed(0)
    head = NeuralModel1(HIDDEN, projection_size=6)
    query, doc = torch.randn(1, 2, HIDDEN), torch.randn(1, 2, HIDDEN)
    both = torch.tensor([[True, True]])
    score = head(features(query, doc, both, both)).item()
    pq, pd = head.query_projection(query[0]), head.doc_projection(doc[0])
    assert pq.shape == (2, 6)
    expected = sum(math.log(sum(torch.sigmoid(pq[i] @ pd[j]).item() / 2 for j in range(2)) + EPSILON)
                   for i in range(2))
    assert score == pytest.approx(expected, rel=1e-5)


def test_padding_tokens_and_pooled_vectors_never_change_a_score():
    torch.manual_seed(0)
    head = NeuralModel1(HIDDEN).eval()
    query, doc = torch.randn(2, 3, HIDDEN), torch.randn(2, 5, HIDDEN)
    query_mask = torch.tensor([[True, True, True], [True, True, False]])
    doc_mask = torch.tensor([[True] * 5, [True, True, False, False, False]])
    base = head(features(query, doc, query_mask, doc_mask))
    garbage = lambda t, n: torch.cat([t, 50 * torch.randn(t.shape[0], n, HIDDEN)], dim=1)  # noqa: E731
    no = lambda mask, n: torch.cat([mask, torch.zeros(mask.shape[0], n, dtype=torch.bool)], dim=1)  # noqa: E731
    padded = head(features(garbage(query, 2), garbage(doc, 3), no(query_mask, 2), no(doc_mask, 3),
                           pooled=torch.randn(2, 3, HIDDEN)))
    assert torch.allclose(padded, base, atol=1e-5)
    alone = head(features(query[1:, :2], doc[1:, :2], query_mask[1:, :2], doc_mask[1:, :2]))
    assert torch.allclose(alone, base[1:], atol=1e-5)


def test_projections_start_out_of_sigmoid_saturation():
    torch.manual_seed(0)
    head = NeuralModel1(768)
    query, doc = torch.randn(1, 32, 768), torch.randn(1, 400, 768) + 0.5 * torch.randn(768)  # anisotropic
    logits = head.query_projection(query) @ head.doc_projection(doc).transpose(1, 2)
    assert 0.3 < logits.std().item() < 3.0
    assert head.query_projection[1].weight[0].item() == pytest.approx(768 ** -0.25)


def test_head_dropout_acts_on_the_token_vectors():
    torch.manual_seed(0)
    head = NeuralModel1(64, head_dropout=0.5).train()
    seen = []
    head.query_projection.register_forward_pre_hook(lambda module, inputs: seen.append(inputs[0]))
    head.doc_projection.register_forward_pre_hook(lambda module, inputs: seen.append(inputs[0]))
    ones = torch.ones(1, 4, 64)
    mask = torch.ones(1, 4, dtype=torch.bool)
    head(features(ones, ones, mask, mask))
    assert all(set(x.unique().tolist()) == {0.0, 2.0} for x in seen)
    seen.clear()
    head.eval()(features(ones, ones, mask, mask))
    assert all(torch.equal(x, ones) for x in seen)
