"""PARADE heads (Li et al.): combine the chunk vectors into one document vector, then score it.

Every head honours the chunk mask: padding-only chunks never contribute. `head_dropout` drops
elements of the pooled document vector before the scoring layer during training (the study's
authors: p = 0.1).
"""

from __future__ import annotations

import torch
from torch import nn

from posbias.rankers.features import ChunkFeatures


class ParadePooling(nn.Module):
    """PARADE Avg and Max: pool the valid chunk vectors element-wise, then score."""

    token_layers = None

    def __init__(self, hidden_size: int, mode: str, head_dropout: float = 0.0):
        super().__init__()
        if mode not in ("mean", "max"):
            raise ValueError(f"PARADE pooling {mode!r} is not 'mean' or 'max'")
        self.mode = mode
        self.dropout = nn.Dropout(head_dropout)
        self.score = nn.Linear(hidden_size, 1)

    def forward(self, features: ChunkFeatures) -> torch.Tensor:
        vectors, expanded = features.pooled, features.chunk_mask.unsqueeze(-1)
        if self.mode == "max":
            pooled = vectors.masked_fill(~expanded, float("-inf")).max(dim=1).values
        else:
            pooled = (vectors * expanded).sum(dim=1) / expanded.sum(dim=1).clamp(min=1)
        return self.score(self.dropout(pooled)).squeeze(-1)


class ParadeAttention(nn.Module):
    """PARADE Attention: one learned vector C gives each chunk a scalar weight,
    softmax-normalised over the valid chunks; the weighted sum of chunk vectors is scored."""

    token_layers = None

    def __init__(self, hidden_size: int, head_dropout: float = 0.0):
        super().__init__()
        self.query_vector = nn.Parameter(torch.empty(hidden_size).normal_(std=0.02))
        self.dropout = nn.Dropout(head_dropout)
        self.score = nn.Linear(hidden_size, 1)

    def chunk_weights(self, vectors: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = (vectors @ self.query_vector).masked_fill(~mask, float("-inf"))
        return torch.softmax(logits, dim=1)

    def forward(self, features: ChunkFeatures) -> torch.Tensor:
        weights = self.chunk_weights(features.pooled, features.chunk_mask)
        pooled = (weights.unsqueeze(-1) * features.pooled).sum(dim=1)
        return self.score(self.dropout(pooled)).squeeze(-1)
