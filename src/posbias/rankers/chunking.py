"""The chunking core every ranker shares.

A document is cut to `max_doc_tokens` and split into windows of `chunk_tokens`
tokens every `stride` tokens (stride == chunk_tokens gives disjoint chunks).
Each window becomes one cross-encoder input `[CLS] query [SEP] window [SEP]`,
with the query cut to `max_query_tokens`. A batch is padded only to its longest
document and longest sequence, and comes with a validity mask per chunk so
aggregators never look at padding-only chunks (and none are computed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class ChunkGeometry:
    max_query_tokens: int
    chunk_tokens: int
    stride: int
    max_doc_tokens: int

    def __post_init__(self):
        for name in ("max_query_tokens", "chunk_tokens", "stride", "max_doc_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"chunk geometry: {name} must be positive, got {getattr(self, name)}")
        if self.stride > self.chunk_tokens:
            raise ValueError(f"chunk geometry: stride {self.stride} > chunk_tokens {self.chunk_tokens} would skip text")
        if self.max_doc_tokens < self.chunk_tokens:
            raise ValueError(f"chunk geometry: max_doc_tokens {self.max_doc_tokens} < chunk_tokens {self.chunk_tokens}")

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
    """Tokenises queries and documents once and assembles padded chunk batches."""

    def __init__(self, tokenizer, geometry: ChunkGeometry):
        self.tokenizer = tokenizer
        self.geometry = geometry
        self.cls_id = tokenizer.cls_token_id
        self.sep_id = tokenizer.sep_token_id
        self.pad_id = tokenizer.pad_token_id
        if None in (self.cls_id, self.sep_id, self.pad_id):
            raise ValueError("the tokenizer needs [CLS], [SEP] and [PAD] tokens for cross-encoding")

    def _ids(self, texts: list[str], limit: int) -> list[list[int]]:
        encoded = self.tokenizer(texts, add_special_tokens=False, truncation=True, max_length=limit)
        return encoded["input_ids"]

    def tokenize_queries(self, texts: list[str]) -> list[list[int]]:
        return self._ids(texts, self.geometry.max_query_tokens)

    def tokenize_documents(self, texts: list[str]) -> list[list[int]]:
        return self._ids(texts, self.geometry.max_doc_tokens)

    def batch(self, pairs: list[tuple[list[int], list[int]]]) -> ChunkBatch:
        """Build a batch from (query token ids, document token ids) pairs."""
        sequences: list[list[list[int]]] = []
        for query_ids, doc_ids in pairs:
            query_ids = query_ids[: self.geometry.max_query_tokens]
            doc_ids = doc_ids[: self.geometry.max_doc_tokens]
            sequences.append([
                [self.cls_id, *query_ids, self.sep_id, *doc_ids[start:end], self.sep_id]
                for start, end in self.geometry.windows(len(doc_ids))
            ])
        n_chunks = max(len(chunks) for chunks in sequences)
        length = max(len(seq) for chunks in sequences for seq in chunks)
        shape = (len(pairs), n_chunks, length)
        input_ids = torch.full(shape, self.pad_id, dtype=torch.long)
        attention = torch.zeros(shape, dtype=torch.long)
        token_types = torch.zeros(shape, dtype=torch.long)
        chunk_mask = torch.zeros(shape[:2], dtype=torch.bool)
        for b, ((query_ids, _), chunks) in enumerate(zip(pairs, sequences)):
            query_part = min(len(query_ids), self.geometry.max_query_tokens) + 2
            for c, seq in enumerate(chunks):
                input_ids[b, c, : len(seq)] = torch.tensor(seq)
                attention[b, c, : len(seq)] = 1
                token_types[b, c, query_part: len(seq)] = 1
                chunk_mask[b, c] = True
        return ChunkBatch(input_ids, attention, token_types, chunk_mask)
