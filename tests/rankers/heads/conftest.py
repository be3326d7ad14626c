"""Checks every head that reads pooled chunk vectors must pass."""

import pytest
import torch

from posbias.rankers.features import ChunkFeatures


def pooled(vectors, mask):
    return ChunkFeatures(vectors, mask)


@pytest.fixture
def check_padding_chunks_never_change_the_score():
    def check(head):
        torch.manual_seed(0)
        vectors = torch.randn(2, 3, 8)
        mask = torch.tensor([[True, True, False], [True, True, True]])
        base = head(pooled(vectors, mask))
        # more padding chunks, holding garbage, must not matter
        padded = torch.cat([vectors, 50 * torch.randn(2, 4, 8)], dim=1)
        padded[0, 2] = 99.0
        padded_mask = torch.cat([mask, torch.zeros(2, 4, dtype=torch.bool)], dim=1)
        assert torch.allclose(head(pooled(padded, padded_mask)), base, atol=1e-5)
        # and a document scores the same alone as in a batch with a longer one
        assert torch.allclose(head(pooled(vectors[:1, :2], mask[:1, :2])), base[:1], atol=1e-5)

    return check


@pytest.fixture
def check_head_dropout():
    """`make(p)` builds a head with head_dropout p over 64-dimensional vectors and a `score` layer."""

    def scoring_input(make, p, train):
        seen = []
        head = make(p).train(train)
        handle = head.score.register_forward_pre_hook(lambda module, inputs: seen.append(inputs[0]))
        head(pooled(torch.ones(1, 2, 64), torch.tensor([[True, True]])))  # every pooled vector is all ones
        handle.remove()
        return seen.pop()

    def check(make):
        torch.manual_seed(0)
        dropped = scoring_input(make, 0.5, train=True)
        assert set(dropped.unique().tolist()) == {0.0, 2.0}  # zeroed, or kept and scaled by 1 / (1 - p)
        assert torch.equal(scoring_input(make, 0.5, train=False), torch.ones_like(dropped))  # off when scoring
        assert torch.equal(scoring_input(make, 0.0, train=True), torch.ones_like(dropped))  # the default: none

    return check
