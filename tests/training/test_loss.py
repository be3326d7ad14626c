import pytest
import torch

from posbias.training.loss import pairwise_margin_loss


def test_the_margin_loss_is_a_mean_or_a_sum_over_pairs():
    pos, neg = torch.tensor([2.0, 0.0, 1.0]), torch.tensor([0.5, 0.5, 1.0])
    # max(0, 1 - 1.5) = 0, max(0, 1 + 0.5) = 1.5, max(0, 1 - 0) = 1
    assert pairwise_margin_loss(pos, neg, margin=1.0).item() == pytest.approx(2.5 / 3)
    assert pairwise_margin_loss(pos, neg, margin=1.0, reduction="sum").item() == pytest.approx(2.5)
    assert pairwise_margin_loss(pos, neg, margin=2.0, reduction="sum").item() == pytest.approx(0.5 + 2.5 + 2)
