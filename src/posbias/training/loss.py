"""The pairwise margin loss used to train every cross-encoder in the study."""

import torch


def pairwise_margin_loss(positive: torch.Tensor, negative: torch.Tensor, margin: float = 1.0) -> torch.Tensor:
    """mean(max(0, margin - s(q, d+) + s(q, d-)))"""
    return torch.relu(margin - positive + negative).mean()
