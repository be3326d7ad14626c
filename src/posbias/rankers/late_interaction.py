"""The featurizer and encoder of late-interaction rankers (PARADE-LATEIR, the study's S C.2 "Miscellaneous"):
the backbone encodes the query and every document window on their own, never together.

- `LateChunker` lays pairs out as the chunked cross-encoders' `Chunker` does (the same `ChunkGeometry`,
  windows, query cut and `pad_query`; it is a `Chunker`, so `tokenize_queries` is shared) but builds two
  kinds of sequences: `[CLS] query [SEP]` once per pair and `[CLS] window [SEP]` per window.
- `LateInteractionEncoder` runs the backbone on both and returns `WindowTokenFeatures`: the last layer's
  states of the query's tokens and of each window's tokens (without the backbone's own [CLS] and [SEP]).

Token types (ours; the paper is silent): 0 on the query sequence, and on a window sequence 0 on [CLS], 1 on
the window's tokens and its [SEP], as the document segment of a cross-encoder (the study's authors' code
also gives the window's tokens type 1). They are sent only to backbones with more than one token type.

`LateBatch` has `to(device)` like `ChunkBatch`, so training and reranking handle it unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
from torch import nn

from posbias.rankers.chunking import Chunker
from posbias.rankers.features import WindowTokenFeatures


@dataclass
class LateBatch:
    query_ids: torch.Tensor  # [batch, query slots + 2]: [CLS] query (padding) [SEP]
    query_attention: torch.Tensor  # [batch, query slots + 2]
    # The query's tokens are at positions 1 .. 1 + query slots.
    query_mask: torch.Tensor  # [batch, query slots], True on real query tokens
    query_kept: torch.Tensor  # [batch, query slots], True on the slots a head lays out (pad_query: all)
    window_ids: torch.Tensor  # [batch, chunks, window tokens + 2]: [CLS] window [SEP]
    window_attention: torch.Tensor  # [batch, chunks, window tokens + 2]
    window_types: torch.Tensor  # [batch, chunks, window tokens + 2]
    # A window's tokens are at positions 1 .. 1 + window tokens.
    window_mask: torch.Tensor  # [batch, chunks, window tokens], True on real document tokens
    chunk_mask: torch.Tensor  # [batch, chunks], True where the chunk holds document text

    def to(self, device) -> "LateBatch":
        return LateBatch(**{field.name: getattr(self, field.name).to(device) for field in dataclasses.fields(self)})


class LateChunker(Chunker):
    """Query and windows as separate backbone inputs; padded to the batch's longest query and window."""

    def batch(self, pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> LateBatch:
        layouts = self.layouts(pairs)
        n, n_chunks = len(layouts), max(len(layout.windows) for layout in layouts)
        slots = max(layout.slots for layout in layouts)
        span = max(end - start for layout in layouts for start, end in layout.windows)
        query_ids = np.full((n, slots + 2), self.pad_id, dtype=np.int64)
        query_attention = np.zeros(query_ids.shape, dtype=np.int64)
        query_mask = np.zeros((n, slots), dtype=bool)
        query_kept = np.zeros((n, slots), dtype=bool)
        window_ids = np.full((n, n_chunks, span + 2), self.pad_id, dtype=np.int64)
        window_attention = np.zeros(window_ids.shape, dtype=np.int64)
        window_types = np.zeros(window_ids.shape, dtype=np.int64)
        window_mask = np.zeros((n, n_chunks, span), dtype=bool)
        chunk_mask = np.zeros((n, n_chunks), dtype=bool)
        for b, (query, query_slots, doc, windows) in enumerate(layouts):
            row = query_ids[b]
            row[0] = self.cls_id
            row[1:1 + len(query)] = query  # the query's pad slots (pad_query) keep pad_id
            row[query_slots + 1] = self.sep_id
            query_attention[b, :query_slots + 2] = 1
            query_attention[b, 1 + len(query):query_slots + 1] = 0  # the query's padding is masked
            query_mask[b, :len(query)] = True
            query_kept[b, :query_slots] = True
            for c, (start, end) in enumerate(windows):
                length = end - start
                window_ids[b, c, 0] = self.cls_id
                window_ids[b, c, 1:1 + length] = doc[start:end]
                window_ids[b, c, 1 + length] = self.sep_id
                window_attention[b, c, :length + 2] = 1
                window_types[b, c, 1:length + 2] = self.token_types
                window_mask[b, c, :length] = True
                chunk_mask[b, c] = True
        arrays = (query_ids, query_attention, query_mask, query_kept, window_ids, window_attention, window_types,
                  window_mask, chunk_mask)
        return LateBatch(*(torch.from_numpy(array) for array in arrays))


class LateInteractionEncoder(nn.Module):
    """Runs the backbone on the queries and on the valid windows separately; returns their token states."""

    def __init__(self, backbone: nn.Module):
        super().__init__()
        self.backbone = backbone
        self.hidden_size = backbone.config.hidden_size
        self.uses_token_types = getattr(backbone.config, "type_vocab_size", 0) > 1

    def forward(self, batch: LateBatch) -> WindowTokenFeatures:
        query_inputs = {"input_ids": batch.query_ids, "attention_mask": batch.query_attention}
        if self.uses_token_types:
            query_inputs["token_type_ids"] = torch.zeros_like(batch.query_ids)
        slots = batch.query_mask.shape[1]
        query_states = self.backbone(**query_inputs).last_hidden_state[:, 1:1 + slots]
        valid = batch.chunk_mask
        window_inputs = {"input_ids": batch.window_ids[valid], "attention_mask": batch.window_attention[valid]}
        if self.uses_token_types:
            window_inputs["token_type_ids"] = batch.window_types[valid]
        span = batch.window_mask.shape[2]
        states = self.backbone(**window_inputs).last_hidden_state[:, 1:1 + span]
        window_states = states.new_zeros((*valid.shape, span, states.shape[-1]))
        window_states[valid] = states
        return WindowTokenFeatures(query_states, batch.query_mask, batch.query_kept, window_states, batch.window_mask,
                                   valid)
