"""The pairwise margin loss used to train every cross-encoder in the study."""

import torch


def pairwise_margin_loss(positive: torch.Tensor, negative: torch.Tensor, margin: float = 1.0,
                         reduction: str = "mean") -> torch.Tensor:
    """The mean (or sum) over pairs of max(0, margin - s(q, d+) + s(q, d-)): torch's margin ranking loss
    with the positive ranked first. The study's authors summed (MarginRankingLoss(reduction='sum'))."""
    return torch.nn.functional.margin_ranking_loss(positive, negative, torch.ones_like(positive), margin=margin,
                                                   reduction=reduction)
