"""A bi-encoder's score: the similarity of a query's and a document's embeddings.

E5 (and the study's E5-4K row) L2-normalises both and takes the dot product, i.e. the cosine; `normalise=False`
gives the raw dot product that many dense retrievers use. It has no parameters.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class EmbeddingSimilarity(nn.Module):
    token_layers = None  # reads pooled vectors only

    def __init__(self, normalise: bool = True):
        super().__init__()
        self.normalise = normalise

    def forward(self, queries: torch.Tensor, documents: torch.Tensor) -> torch.Tensor:
        if self.normalise:
            queries, documents = F.normalize(queries, dim=-1), F.normalize(documents, dim=-1)
        return (queries * documents).sum(dim=-1)
