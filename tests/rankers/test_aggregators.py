import math

import pytest
import torch

from posbias.rankers.aggregators import ParadeAttention, ParadePooling, ScoreAggregator

AGGREGATORS = [lambda h: ScoreAggregator(h, "first"), lambda h: ScoreAggregator(h, "max"),
               lambda h: ScoreAggregator(h, "sum"), lambda h: ScoreAggregator(h, "mean"),
               lambda h: ParadePooling(h, "mean"), lambda h: ParadePooling(h, "max"), ParadeAttention]


@pytest.mark.parametrize("make", AGGREGATORS)
def test_padding_chunks_never_change_the_score(make):
    torch.manual_seed(0)
    aggregator = make(8)
    vectors = torch.randn(2, 3, 8)
    mask = torch.tensor([[True, True, False], [True, True, True]])
    base = aggregator(vectors, mask)
    # more padding chunks, holding garbage, must not matter
    padded = torch.cat([vectors, 50 * torch.randn(2, 4, 8)], dim=1)
    padded[0, 2] = 99.0
    padded_mask = torch.cat([mask, torch.zeros(2, 4, dtype=torch.bool)], dim=1)
    assert torch.allclose(aggregator(padded, padded_mask), base, atol=1e-5)
    # and a document scores the same alone as in a batch with a longer one
    assert torch.allclose(aggregator(vectors[:1, :2], mask[:1, :2]), base[:1], atol=1e-5)


def test_score_aggregators_combine_chunk_scores_as_named():
    aggregator = ScoreAggregator(1, "first")
    with torch.no_grad():
        aggregator.score.weight.fill_(1.0)
        aggregator.score.bias.fill_(0.0)
    vectors = torch.tensor([[[1.0], [3.0], [7.0]]])
    mask = torch.tensor([[True, True, False]])
    expected = {"first": 1.0, "max": 3.0, "sum": 4.0, "mean": 2.0}
    for mode, value in expected.items():
        aggregator.mode = mode
        assert aggregator(vectors, mask).item() == pytest.approx(value)


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


@pytest.mark.parametrize("make", [lambda h, p: ScoreAggregator(h, "max", p), lambda h, p: ScoreAggregator(h, "mean", p),
                                  lambda h, p: ParadePooling(h, "mean", p), lambda h, p: ParadePooling(h, "max", p),
                                  lambda h, p: ParadeAttention(h, p)])
def test_head_dropout_acts_on_the_vector_the_scoring_layer_reads(make):
    torch.manual_seed(0)
    seen = []
    vectors, mask = torch.ones(1, 2, 64), torch.tensor([[True, True]])  # every pooled vector is all ones

    def scoring_input(p, train):
        aggregator = make(64, p).train(train)
        handle = aggregator.score.register_forward_pre_hook(lambda module, inputs: seen.append(inputs[0]))
        aggregator(vectors, mask)
        handle.remove()
        return seen.pop()

    dropped = scoring_input(0.5, train=True)
    assert set(dropped.unique().tolist()) == {0.0, 2.0}  # zeroed, or kept and scaled by 1 / (1 - p)
    assert torch.equal(scoring_input(0.5, train=False), torch.ones_like(dropped))  # off when scoring
    assert torch.equal(scoring_input(0.0, train=True), torch.ones_like(dropped))  # the default: none
