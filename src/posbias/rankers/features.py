"""What a chunk encoder hands to a ranker's head (`posbias.rankers.heads`).

Every head gets one pooled vector per chunk and the chunk mask. Interaction heads (CEDR, Neural
Model 1) also ask for token states (`token_layers`): the query's tokens, taken from the first
chunk, and the document's tokens, re-joined across its chunks in order (for disjoint chunks that
is the document itself, up to the ranker's token budget). Each comes with a mask that is False on
padding, so no head needs to know where padding sits in the encoder's input.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

# What a head may ask the encoder for, beyond the pooled chunk vectors.
TOKEN_LAYERS = (None, "last", "all")  # None: no token states; "all": embedding output and every layer


@dataclass
class ChunkFeatures:
    pooled: torch.Tensor  # [batch, chunks, hidden]; zeros for padding-only chunks
    chunk_mask: torch.Tensor  # [batch, chunks], True where the chunk holds document text
    query_states: torch.Tensor | None = None  # [batch, layers, query slots, hidden]
    query_mask: torch.Tensor | None = None  # [batch, query slots], True on real query tokens
    doc_states: torch.Tensor | None = None  # [batch, layers, document tokens, hidden]
    doc_mask: torch.Tensor | None = None  # [batch, document tokens], True on real document tokens

    def float(self) -> "ChunkFeatures":
        """The same features in fp32 (heads run outside autocast; see `ChunkRanker.forward`)."""
        return _in_fp32(self)


@dataclass
class WindowTokenFeatures:
    """What a late-interaction encoder (`posbias.rankers.late_interaction`) hands to its head: the query and
    every window encoded on their own, as token states of the backbone's last layer."""

    query_states: torch.Tensor  # [batch, query slots, hidden]
    query_mask: torch.Tensor  # [batch, query slots], True on real query tokens
    query_kept: torch.Tensor  # [batch, query slots], True on the slots a head lays out (pad_query: all of them)
    window_states: torch.Tensor  # [batch, chunks, window tokens, hidden]; zeros for padding-only chunks
    window_mask: torch.Tensor  # [batch, chunks, window tokens], True on real document tokens
    chunk_mask: torch.Tensor  # [batch, chunks], True where the chunk holds document text

    def float(self) -> "WindowTokenFeatures":
        return _in_fp32(self)


def _in_fp32(features):
    return dataclasses.replace(features, **{field.name: value.float() for field in dataclasses.fields(features)
                                            if (value := getattr(features, field.name)) is not None
                                            and value.is_floating_point()})
