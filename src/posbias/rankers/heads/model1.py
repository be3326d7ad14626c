"""Neural Model 1 (Boytsov & Kolter, ECIR 2021, "BERT-Model1"): IBM Model 1 on contextualised token embeddings.

The head reads the last layer's token states (`token_layers = "last"`): x_q for the query's tokens
(from the first chunk) and y_d for the document's (greedy disjoint chunks re-joined). It does not use
[CLS] or any pooled vector (S C.2). With P(d|D) uniform over the document's real tokens:

    score(Q, D) = Σ_{q ∈ Q, real} log( Σ_{d ∈ D, real} T(q|d) · P(d|D) + ε ),
    T(q|d) = σ( P_q(x_q) · P_d(y_d) ).

The study's authors did not release this model's code, and the seed gives no formula, so these
points are ours (the spec's suggested defaults), open to checking against Boytsov & Kolter §3:

- P_q and P_d are each a Linear(hidden → `projection_size`) followed by a LayerNorm; `projection_size`
  defaults to the backbone's hidden size (768 → 768 for BERT-base).
- The LayerNorms' gains start at projection_size^(-1/4) instead of 1, so that the dot product starts
  with a spread of about 1: with unit gains it spreads like sqrt(projection_size) (about ±28 for
  768), the sigmoid saturates and almost no gradient passes. The model (the function class) is the
  same; only its starting point differs.
- No collection smoothing (no λ·P(q|C) term), ε = 1e-9.
- `head_dropout` acts on the token vectors entering the projections (training only); default 0.

A document without real tokens scores Σ_q log ε. The pooled chunk vectors the encoder still computes
are unused (they cost nothing extra), and no trainable module reads them.
"""

from __future__ import annotations

import torch
from torch import nn

from posbias.rankers.features import ChunkFeatures

EPSILON = 1e-9


def projection(hidden_size: int, size: int) -> nn.Sequential:
    layer = nn.Sequential(nn.Linear(hidden_size, size), nn.LayerNorm(size))
    with torch.no_grad():
        layer[1].weight.fill_(size ** -0.25)  # ours: see the module docstring
    return layer


class NeuralModel1(nn.Module):
    token_layers = "last"

    def __init__(self, hidden_size: int, projection_size: int | None = None, head_dropout: float = 0.0):
        super().__init__()
        size = projection_size or hidden_size
        self.dropout = nn.Dropout(head_dropout)
        self.query_projection = projection(hidden_size, size)
        self.doc_projection = projection(hidden_size, size)

    def translation(self, query: torch.Tensor, doc: torch.Tensor) -> torch.Tensor:
        """T(q|d) [batch, query tokens, document tokens] from token vectors [batch, length, hidden]."""
        return torch.sigmoid(self.query_projection(query) @ self.doc_projection(doc).transpose(1, 2))

    @staticmethod
    def log_likelihood(translation: torch.Tensor, query_mask: torch.Tensor, doc_mask: torch.Tensor) -> torch.Tensor:
        """Σ over real query tokens of log(Σ over real document tokens of T(q|d) / |D| + ε)."""
        weights = doc_mask.to(translation.dtype)
        weights = weights / weights.sum(dim=1, keepdim=True).clamp(min=1)  # P(d|D), uniform
        likelihood = (translation * weights.unsqueeze(1)).sum(dim=2)  # [B, Q]
        return (torch.log(likelihood + EPSILON) * query_mask.to(likelihood.dtype)).sum(dim=1)

    def forward(self, features: ChunkFeatures) -> torch.Tensor:
        query = self.dropout(features.query_states[:, -1])
        doc = self.dropout(features.doc_states[:, -1])
        return self.log_likelihood(self.translation(query, doc), features.query_mask, features.doc_mask)
