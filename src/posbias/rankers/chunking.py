"""The featurizer of chunked cross-encoders: token ids in, padded chunk batches out.

Each chunk is `[CLS] query [SEP] window [SEP]`. The layout of each input (windows, query length,
`pad_query`) is the ranker's `ChunkGeometry` (`posbias.rankers.geometry`). A batch is padded only
to its longest document and longest sequence, and comes with a validity mask per chunk so heads
never look at padding-only chunks (and none are computed). It also says where the query's and the
document's tokens sit, so an encoder can hand token states to interaction heads
(`posbias.rankers.features`) without knowing the layout.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import NamedTuple, Sequence

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
    # The query's tokens are at positions 1 .. 1 + query slots of every chunk; True on real ones.
    query_mask: torch.Tensor  # [batch, query slots]
    # Where the document's tokens are, in order, in the flattened [chunks x length] input of each
    # pair (every window's tokens, one window after another), and True on real ones.
    doc_positions: torch.Tensor  # [batch, document tokens]
    doc_mask: torch.Tensor  # [batch, document tokens]
    # Longformer's global attention, [batch, chunks, length], where a featurizer asks for it.
    global_attention_mask: torch.Tensor | None = None
    # The batch as the featurizer built it, in host memory, kept by `to`: what is decided from the masks (which
    # chunks, how long, in which groups) is read from it, so a batch on a GPU makes the host wait for nothing.
    host: "ChunkBatch | None" = dataclasses.field(default=None, repr=False, compare=False)

    def to(self, device, non_blocking: bool = False) -> "ChunkBatch":
        moved = {name: value.to(device, non_blocking=non_blocking) for name, value in self.tensors()}
        return dataclasses.replace(self, **moved, host=self.on_host())

    def pin_memory(self) -> "ChunkBatch":
        """This batch in page-locked host memory (needs CUDA), so `to(cuda, non_blocking=True)` returns at once and
        the copy overlaps the device's work; the pinned batch is its own host copy."""
        return dataclasses.replace(self, **{name: value.pin_memory() for name, value in self.tensors()}, host=None)

    def tensors(self) -> list[tuple[str, torch.Tensor]]:
        """The batch's tensors by field name (not its host copy, not an absent global attention mask)."""
        return [(field.name, value) for field in dataclasses.fields(self)
                if field.name != "host" and (value := getattr(self, field.name)) is not None]

    def on_host(self) -> "ChunkBatch":
        """The host copy: this batch itself until moved."""
        return self.host if self.host is not None else self


class Layout(NamedTuple):
    """How one (query, document) pair is laid out (`Chunker.layouts`)."""
    query: np.ndarray  # the query's token ids, cut to max_query_tokens
    slots: int  # positions the query takes: max_query_tokens with pad_query, else its length
    doc: np.ndarray  # the document's token ids, cut to max_doc_tokens
    windows: list[tuple[int, int]]  # token spans of the document's windows (`ChunkGeometry.windows`)


class Chunker:
    """Tokenises queries and assembles padded chunk batches from query and document token ids.

    Document ids come from a token store (`posbias.data.token_store`) one batch at a time, as
    int32 arrays; nothing here holds a collection's tokens.
    """

    def __init__(self, tokenizer, geometry: ChunkGeometry):
        self.tokenizer = tokenizer
        self.geometry = geometry
        self.special_tokens(tokenizer)

    def special_tokens(self, tokenizer) -> None:
        """Read the special tokens this featurizer lays inputs out with, refusing a tokenizer without them."""
        self.cls_id = tokenizer.cls_token_id
        self.sep_id = tokenizer.sep_token_id
        self.pad_id = tokenizer.pad_token_id
        if None in (self.cls_id, self.sep_id, self.pad_id):
            raise InputError("the tokenizer needs [CLS], [SEP] and [PAD] tokens for cross-encoding")
        # Token types as the tokenizer makes them: a tokenizer that emits none (Big-Bird's) leaves them all 0,
        # which is what the model sees when it is given none.
        self.token_types = "token_type_ids" in tokenizer.model_input_names

    def tokenize_queries(self, texts: list[str]) -> list[list[int]]:
        if not texts:  # the tokenizer fails on an empty batch
            return []
        return self.tokenizer(texts, add_special_tokens=False, truncation=True,
                              max_length=self.geometry.max_query_tokens, return_attention_mask=False,
                              return_token_type_ids=False)["input_ids"]

    def layouts(self, pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> list[Layout]:
        """Per pair: the query's ids (cut to `max_query_tokens`), the query's slots (its padded length with
        `pad_query`, else its length), the document's ids (cut to `max_doc_tokens`) and its windows.
        Every featurizer of windowed documents lays pairs out with this."""
        geometry = self.geometry
        layouts = []
        for query_ids, doc_ids in pairs:
            query = np.asarray(query_ids[: geometry.max_query_tokens], dtype=np.int64)
            doc = np.asarray(doc_ids[: geometry.max_doc_tokens], dtype=np.int64)
            slots = geometry.max_query_tokens if geometry.pad_query else len(query)
            layouts.append(Layout(query, slots, doc, geometry.windows(len(doc))))
        return layouts

    def batch(self, pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> ChunkBatch:
        """Build a batch from (query token ids, document token ids) pairs (lists or int arrays)."""
        layouts = self.layouts(pairs)
        n_chunks = max(len(windows) for *_, windows in layouts)
        length = max(slots + end - start + 3 for _, slots, _, windows in layouts for start, end in windows)
        shape = (len(pairs), n_chunks, length)
        input_ids = np.full(shape, self.pad_id, dtype=np.int64)
        attention = np.zeros(shape, dtype=np.int64)
        token_types = np.zeros(shape, dtype=np.int64)
        chunk_mask = np.zeros(shape[:2], dtype=bool)
        query_slots = max(slots for _, slots, _, _ in layouts)
        query_mask = np.zeros((len(pairs), query_slots), dtype=bool)
        doc_tokens = max(sum(end - start for start, end in windows) for *_, windows in layouts)
        doc_positions = np.zeros((len(pairs), doc_tokens), dtype=np.int64)
        doc_mask = np.zeros((len(pairs), doc_tokens), dtype=bool)
        for b, (query, slots, doc, windows) in enumerate(layouts):
            query_mask[b, :len(query)] = True
            joined = 0
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
                token_types[b, c, query_part:used] = self.token_types
                chunk_mask[b, c] = True
                span = end - start
                doc_positions[b, joined:joined + span] = c * length + query_part + np.arange(span)
                doc_mask[b, joined:joined + span] = True
                joined += span
        arrays = (input_ids, attention, token_types, chunk_mask, query_mask, doc_positions, doc_mask)
        return ChunkBatch(*(torch.from_numpy(array) for array in arrays))
