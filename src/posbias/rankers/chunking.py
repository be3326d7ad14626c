"""The chunking core every ranker shares.

A document (its token ids, from a token store) is cut to `max_doc_tokens` and split into windows of `chunk_tokens`
tokens every `stride` tokens (stride == chunk_tokens gives disjoint chunks).
Each window becomes one cross-encoder input `[CLS] query [SEP] window [SEP]`,
with the query cut to `max_query_tokens`. A batch is padded only to its longest
document and longest sequence, and comes with a validity mask per chunk so
aggregators never look at padding-only chunks (and none are computed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from posbias.errors import InputError


@dataclass(frozen=True)
class ChunkGeometry:
    max_query_tokens: int
    chunk_tokens: int
    stride: int
    max_doc_tokens: int

    def __post_init__(self):
        for name in ("max_query_tokens", "chunk_tokens", "stride", "max_doc_tokens"):
            if getattr(self, name) < 1:
                raise InputError(f"chunk geometry: {name} must be positive, got {getattr(self, name)}")
        if self.stride > self.chunk_tokens:
            raise InputError(f"chunk geometry: stride {self.stride} > chunk_tokens {self.chunk_tokens} would skip text")
        if self.max_doc_tokens < self.chunk_tokens:
            raise InputError(f"chunk geometry: max_doc_tokens {self.max_doc_tokens} < chunk_tokens {self.chunk_tokens}")

    @property
    def max_chunks(self) -> int:
        return 1 + math.ceil(max(0, self.max_doc_tokens - self.chunk_tokens) / self.stride)

    @property
    def max_sequence_length(self) -> int:
        return self.max_query_tokens + self.chunk_tokens + 3  # [CLS] q [SEP] d [SEP]

    def windows(self, n_tokens: int) -> list[tuple[int, int]]:
        """Token spans of the chunks of a document with `n_tokens` tokens (at least one chunk)."""
        n_tokens = min(n_tokens, self.max_doc_tokens)
        spans = [(0, min(self.chunk_tokens, n_tokens))]
        start = self.stride
        while start + self.chunk_tokens - self.stride < n_tokens and len(spans) < self.max_chunks:
            spans.append((start, min(start + self.chunk_tokens, n_tokens)))
            start += self.stride
        return spans


@dataclass
class ChunkBatch:
    input_ids: torch.Tensor  # [batch, chunks, length]
    attention_mask: torch.Tensor  # [batch, chunks, length]
    token_type_ids: torch.Tensor  # [batch, chunks, length]
    chunk_mask: torch.Tensor  # [batch, chunks], True where the chunk holds document text

    def to(self, device) -> "ChunkBatch":
        return ChunkBatch(*(tensor.to(device) for tensor in
                            (self.input_ids, self.attention_mask, self.token_type_ids, self.chunk_mask)))


class Chunker:
    """Tokenises queries and assembles padded chunk batches from query and document token ids.

    Document ids come from a token store (`posbias.data.token_store`) one batch at a time, as
    int32 arrays; nothing here holds a collection's tokens.
    """

    def __init__(self, tokenizer, geometry: ChunkGeometry):
        self.tokenizer = tokenizer
        self.geometry = geometry
        self.cls_id = tokenizer.cls_token_id
        self.sep_id = tokenizer.sep_token_id
        self.pad_id = tokenizer.pad_token_id
        if None in (self.cls_id, self.sep_id, self.pad_id):
            raise InputError("the tokenizer needs [CLS], [SEP] and [PAD] tokens for cross-encoding")

    def tokenize_queries(self, texts: list[str]) -> list[list[int]]:
        if not texts:  # the tokenizer fails on an empty batch
            return []
        return self.tokenizer(texts, add_special_tokens=False, truncation=True,
                              max_length=self.geometry.max_query_tokens, return_attention_mask=False,
                              return_token_type_ids=False)["input_ids"]

    def batch(self, pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> ChunkBatch:
        """Build a batch from (query token ids, document token ids) pairs (lists or int arrays)."""
        geometry = self.geometry
        layouts = []  # per pair: the query ids and the document windows
        for query_ids, doc_ids in pairs:
            query = np.asarray(query_ids[: geometry.max_query_tokens], dtype=np.int64)
            doc = np.asarray(doc_ids[: geometry.max_doc_tokens], dtype=np.int64)
            layouts.append((query, doc, geometry.windows(len(doc))))
        n_chunks = max(len(windows) for _, _, windows in layouts)
        length = max(len(query) + end - start + 3 for query, _, windows in layouts for start, end in windows)
        shape = (len(pairs), n_chunks, length)
        input_ids = np.full(shape, self.pad_id, dtype=np.int64)
        attention = np.zeros(shape, dtype=np.int64)
        token_types = np.zeros(shape, dtype=np.int64)
        chunk_mask = np.zeros(shape[:2], dtype=bool)
        for b, (query, doc, windows) in enumerate(layouts):
            query_part = len(query) + 2  # [CLS] query [SEP]
            for c, (start, end) in enumerate(windows):
                row = input_ids[b, c]
                row[0] = self.cls_id
                row[1:query_part - 1] = query
                row[query_part - 1] = self.sep_id
                row[query_part:query_part + end - start] = doc[start:end]
                row[query_part + end - start] = self.sep_id
                used = query_part + end - start + 1
                attention[b, c, :used] = 1
                token_types[b, c, query_part:used] = 1
                chunk_mask[b, c] = True
        return ChunkBatch(*(torch.from_numpy(array) for array in (input_ids, attention, token_types, chunk_mask)))
