"""Rankers whose heads read token states: CEDR-KNRM, CEDR-PACRR, CEDR-DRMM and Neural Model 1.

All four split the document greedily into disjoint chunks (S C.2: every chunk but possibly the last
holds `chunk_tokens` document tokens), so each document token is encoded exactly once and the
re-joined document states are the document itself. They refuse overlapping windows
(stride < chunk_tokens): the similarity matrix and Model 1's P(d|D) need each token once.
The heads are in `posbias.rankers.heads.cedr` and `posbias.rankers.heads.model1`.
"""

from __future__ import annotations

from posbias.errors import InputError
from posbias.rankers.base import ChunkRanker
from posbias.rankers.heads.cedr import CedrDrmm, CedrKnrm, CedrPacrr
from posbias.rankers.heads.model1 import NeuralModel1


def channels(backbone) -> int:
    """The embedding output and every layer (13 for BERT-base)."""
    return backbone.config.num_hidden_layers + 1


class CedrKnrmRanker(ChunkRanker):
    def make_head(self, backbone):
        return CedrKnrm(backbone.config.hidden_size, channels(backbone), self.head_dropout)


class CedrPacrrRanker(ChunkRanker):
    def make_head(self, backbone):
        # the MLP reads max_query_tokens query slots (CEDR: a fixed 32), padded or masked as needed
        return CedrPacrr(backbone.config.hidden_size, channels(backbone), self.geometry.max_query_tokens,
                         self.head_dropout)


class CedrDrmmRanker(ChunkRanker):
    def __init__(self, mask_query_padding: bool = True, **kwargs):
        """`mask_query_padding` (ours, default true): sum the per-query-token scores over real query tokens
        only; false sums all max_query_tokens slots, as CEDR does with its 32 padded slots."""
        self.mask_query_padding = mask_query_padding
        super().__init__(**kwargs)

    def make_head(self, backbone):
        return CedrDrmm(backbone.config.hidden_size, channels(backbone), self.geometry.max_query_tokens,
                        self.head_dropout, self.mask_query_padding)


class NeuralModel1Ranker(ChunkRanker):
    def __init__(self, projection_size: int | None = None, **kwargs):
        """`projection_size` (ours): the width of the learned query and document projections; None: the
        backbone's hidden size."""
        if projection_size is not None and projection_size < 1:
            raise InputError(f"neural_model1: projection_size must be positive, got {projection_size}")
        self.projection_size = projection_size
        super().__init__(**kwargs)

    def make_head(self, backbone):
        return NeuralModel1(backbone.config.hidden_size, self.projection_size, self.head_dropout)
