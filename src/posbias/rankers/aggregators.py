"""Aggregators: from chunk vectors and a chunk validity mask to one score per document.

Score aggregators (FirstP, MaxP, SumP, AvgP; Dai & Callan 2019) score every
chunk with a shared linear head and combine the scores. PARADE aggregators
(Li et al.) combine the chunk vectors first and score the document vector.
Every aggregator honours the mask: padding-only chunks never contribute.
`head_dropout` drops elements of the vector the scoring layer reads (each chunk vector, or the
pooled document vector) during training, as the study's authors did with p = 0.1.
"""

from __future__ import annotations

import torch
from torch import nn


class ScoreAggregator(nn.Module):
    """Score each chunk, then take the first, maximum, sum or mean over valid chunks."""

    MODES = ("first", "max", "sum", "mean")

    def __init__(self, hidden_size: int, mode: str, head_dropout: float = 0.0):
        super().__init__()
        if mode not in self.MODES:
            raise ValueError(f"score aggregation {mode!r} is not one of {self.MODES}")
        self.mode = mode
        self.dropout = nn.Dropout(head_dropout)
        self.score = nn.Linear(hidden_size, 1)

    def forward(self, vectors: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        scores = self.score(self.dropout(vectors)).squeeze(-1)  # [batch, chunks]
        if self.mode == "first":
            return scores[:, 0]
        if self.mode == "max":
            return scores.masked_fill(~mask, float("-inf")).max(dim=1).values
        total = (scores * mask).sum(dim=1)
        if self.mode == "sum":
            return total
        return total / mask.sum(dim=1).clamp(min=1)


class ParadePooling(nn.Module):
    """PARADE Avg and Max: pool the valid chunk vectors element-wise, then score."""

    def __init__(self, hidden_size: int, mode: str, head_dropout: float = 0.0):
        super().__init__()
        if mode not in ("mean", "max"):
            raise ValueError(f"PARADE pooling {mode!r} is not 'mean' or 'max'")
        self.mode = mode
        self.dropout = nn.Dropout(head_dropout)
        self.score = nn.Linear(hidden_size, 1)

    def forward(self, vectors: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        expanded = mask.unsqueeze(-1)
        if self.mode == "max":
            pooled = vectors.masked_fill(~expanded, float("-inf")).max(dim=1).values
        else:
            pooled = (vectors * expanded).sum(dim=1) / expanded.sum(dim=1).clamp(min=1)
        return self.score(self.dropout(pooled)).squeeze(-1)


class ParadeAttention(nn.Module):
    """PARADE Attention: one learned vector C gives each chunk a scalar weight,
    softmax-normalised over the valid chunks; the weighted sum of chunk vectors is scored."""

    def __init__(self, hidden_size: int, head_dropout: float = 0.0):
        super().__init__()
        self.query_vector = nn.Parameter(torch.empty(hidden_size).normal_(std=0.02))
        self.dropout = nn.Dropout(head_dropout)
        self.score = nn.Linear(hidden_size, 1)

    def chunk_weights(self, vectors: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = (vectors @ self.query_vector).masked_fill(~mask, float("-inf"))
        return torch.softmax(logits, dim=1)

    def forward(self, vectors: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        weights = self.chunk_weights(vectors, mask)
        pooled = (weights.unsqueeze(-1) * vectors).sum(dim=1)
        return self.score(self.dropout(pooled)).squeeze(-1)
