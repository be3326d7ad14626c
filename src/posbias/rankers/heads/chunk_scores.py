"""Score each chunk, then combine the scores: FirstP, MaxP, SumP and AvgP (Dai & Callan 2019).

`head_dropout` drops elements of each chunk vector before the scoring layer during training, as
the study's authors did with p = 0.1.
"""

from __future__ import annotations

import torch
from torch import nn

from posbias.rankers.features import ChunkFeatures


class ChunkScores(nn.Module):
    """Score each chunk with a shared linear layer, then take the first, maximum, sum or mean over valid chunks."""

    MODES = ("first", "max", "sum", "mean")
    token_layers = None

    def __init__(self, hidden_size: int, mode: str, head_dropout: float = 0.0):
        super().__init__()
        if mode not in self.MODES:
            raise ValueError(f"score aggregation {mode!r} is not one of {self.MODES}")
        self.mode = mode
        self.dropout = nn.Dropout(head_dropout)
        self.score = nn.Linear(hidden_size, 1)

    def forward(self, features: ChunkFeatures) -> torch.Tensor:
        if self.mode == "first":
            return self.score(self.dropout(features.pooled[:, 0])).squeeze(-1)
        mask = features.chunk_mask
        scores = self.score(self.dropout(features.pooled)).squeeze(-1)  # [batch, chunks]
        if self.mode == "max":
            return scores.masked_fill(~mask, float("-inf")).max(dim=1).values
        total = (scores * mask).sum(dim=1)
        if self.mode == "sum":
            return total
        return total / mask.sum(dim=1).clamp(min=1)
