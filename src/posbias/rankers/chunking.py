"""The chunking core every ranker shares: token ids in, padded chunk batches out.

The layout of each input (windows, query length, `pad_query`) is the ranker's `ChunkGeometry`
(`posbias.rankers.geometry`). A batch is padded only to its longest document and longest
sequence, and comes with a validity mask per chunk so aggregators never look at padding-only
chunks (and none are computed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from posbias.errors import InputError
from posbias.rankers.geometry import ChunkGeometry


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
        layouts = []  # per pair: the query ids, the query's slots (padded length) and the document windows
        for query_ids, doc_ids in pairs:
            query = np.asarray(query_ids[: geometry.max_query_tokens], dtype=np.int64)
            doc = np.asarray(doc_ids[: geometry.max_doc_tokens], dtype=np.int64)
            slots = geometry.max_query_tokens if geometry.pad_query else len(query)
            layouts.append((query, slots, doc, geometry.windows(len(doc))))
        n_chunks = max(len(windows) for *_, windows in layouts)
        length = max(slots + end - start + 3 for _, slots, _, windows in layouts for start, end in windows)
        shape = (len(pairs), n_chunks, length)
        input_ids = np.full(shape, self.pad_id, dtype=np.int64)
        attention = np.zeros(shape, dtype=np.int64)
        token_types = np.zeros(shape, dtype=np.int64)
        chunk_mask = np.zeros(shape[:2], dtype=bool)
        for b, (query, slots, doc, windows) in enumerate(layouts):
            query_part = slots + 2  # [CLS] query (and its padding) [SEP]
            for c, (start, end) in enumerate(windows):
                row = input_ids[b, c]
                row[0] = self.cls_id
                row[1:1 + len(query)] = query  # the query's pad slots keep pad_id
                row[query_part - 1] = self.sep_id
                row[query_part:query_part + end - start] = doc[start:end]
                row[query_part + end - start] = self.sep_id
                used = query_part + end - start + 1
                attention[b, c, :used] = 1
                attention[b, c, 1 + len(query):query_part - 1] = 0  # the query's padding is masked
                token_types[b, c, query_part:used] = 1
                chunk_mask[b, c] = True
        return ChunkBatch(*(torch.from_numpy(array) for array in (input_ids, attention, token_types, chunk_mask)))
