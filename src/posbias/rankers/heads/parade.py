"""PARADE heads (Li et al.): combine the chunk vectors into one document vector, then score it.

PARADE Attention comes in two forms: the paper's scalar weight per chunk (`ParadeAttention`, the default)
and the study's authors' per-dimension weights (`ParadeDimAttention`). The Transformer heads are in
`parade_transformer`.

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


class ParadeDimAttention(nn.Module):
    """PARADE Attention as the study's authors' code has it (FlexNeuART `parade_attn`), not as the paper writes
    it (`ParadeAttention`): a Linear(H -> H) layer with bias turns each chunk vector into H logits, a softmax
    over the valid chunks runs per dimension, and each dimension of the document vector is its own weighted
    sum of the chunk vectors' values in that dimension; then dropout and the scoring layer (xavier-initialised,
    as the authors')."""

    token_layers = None

    def __init__(self, hidden_size: int, head_dropout: float = 0.0):
        super().__init__()
        self.attention = nn.Linear(hidden_size, hidden_size)
        self.dropout = nn.Dropout(head_dropout)
        self.score = nn.Linear(hidden_size, 1)
        nn.init.xavier_uniform_(self.score.weight)

    def chunk_weights(self, vectors: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """[batch, chunks, hidden] weights: per dimension, a softmax over the valid chunks."""
        logits = self.attention(vectors).masked_fill(~mask.unsqueeze(-1), float("-inf"))
        return torch.softmax(logits, dim=1)

    def forward(self, features: ChunkFeatures) -> torch.Tensor:
        weights = self.chunk_weights(features.pooled, features.chunk_mask)
        pooled = (weights * features.pooled).sum(dim=1)
        return self.score(self.dropout(pooled)).squeeze(-1)
