"""The bi-encoder ranker (the study's E5-4K rows, S 3.2): query and document are encoded apart, each pooled by
the mean of its real tokens' states, and scored by the cosine of the two vectors (`heads.similarity`).

It reads the whole (truncated) document in one sequence like `longp` (chunk_tokens = stride = max_doc_tokens),
and its FirstP twin is the same ranker with the document cut to 477 tokens. The study ran it zero-shot
(`models.<name>.zero_shot: true`: never trained, scored straight from the pretrained weights).

Each text is laid out in its tokenizer's single-text template (`[CLS] t [SEP]` for BERT) after an optional
prefix: `prefixes: none` (the default, as the study's authors ran E5-4K) or `e5` ("query: " and
"passage: ", the E5 training convention). Prefix tokens come on top of max_query_tokens and max_doc_tokens.

`position_ids: stretched_short` is e5-base-4k's rule for inputs of at most 512 tokens: their position ids are
0, s, 2s, ... with s = max_position_embeddings // 512 (the model was extended from 512 to 4096 positions by
spreading the old ones out); longer inputs count 0, 1, 2, ... as usual. The rule goes by each input's own real
length, so how inputs are batched never changes a score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from posbias.errors import InputError
from posbias.rankers.base import ChunkRanker
from posbias.rankers.chunking import ChunkBatch, Chunker
from posbias.rankers.encoder import ChunkEncoder
from posbias.rankers.geometry import ChunkGeometry, longest_input, refuse_overlong
from posbias.rankers.heads.similarity import EmbeddingSimilarity
from posbias.rankers.pair_template import PREFIXES, SequenceTemplate, prefix_ids

SHORT_INPUT = 512  # the original context of e5-base-4k
POSITION_RULES = ("sequential", "stretched_short")


@dataclass
class BiEncoderBatch:
    """The queries and the documents of a batch of pairs, each as one-chunk `ChunkBatch`es (row i of both is
    pair i), so the chunk encoder reads them unchanged."""

    queries: ChunkBatch
    documents: ChunkBatch

    def to(self, device) -> "BiEncoderBatch":
        return BiEncoderBatch(self.queries.to(device), self.documents.to(device))


class SeparateSequences(Chunker):
    """Query and document of each pair as two inputs, each `prefix + text` in the tokenizer's single-text template."""

    def __init__(self, tokenizer, geometry: ChunkGeometry, prefixes: str = "none"):
        self.prefixes = prefixes
        super().__init__(tokenizer, geometry)

    def special_tokens(self, tokenizer) -> None:
        self.template = SequenceTemplate.of(tokenizer)
        self.pad_id = self.template.pad_id
        self.query_prefix, self.doc_prefix = prefix_ids(tokenizer, self.prefixes)

    def batch(self, pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> BiEncoderBatch:
        layouts = self.layouts(pairs)
        queries = self.sequences([(*self.query_prefix, *query) for query, *_ in layouts])
        documents = self.sequences([(*self.doc_prefix, *doc) for _, _, doc, _ in layouts])
        return BiEncoderBatch(queries, documents)

    def sequences(self, texts: list[tuple[int, ...]]) -> ChunkBatch:
        """One single-chunk input per text: `prefix text suffix` of the template, padded to the longest."""
        prefix, suffix = self.template.prefix, self.template.suffix
        width = len(prefix) + len(suffix) + max(len(text) for text in texts)
        input_ids = np.full((len(texts), 1, width), self.pad_id, dtype=np.int64)
        attention = np.zeros(input_ids.shape, dtype=np.int64)
        text_positions = np.zeros((len(texts), max(1, max(len(text) for text in texts))), dtype=np.int64)
        text_mask = np.zeros(text_positions.shape, dtype=bool)
        for row, text in enumerate(texts):
            ids = (*prefix, *text, *suffix)
            input_ids[row, 0, :len(ids)] = ids
            attention[row, 0, :len(ids)] = 1
            text_positions[row, :len(text)] = np.arange(len(prefix), len(prefix) + len(text))
            text_mask[row, :len(text)] = True
        arrays = (input_ids, attention, np.zeros_like(input_ids), np.ones((len(texts), 1), dtype=bool),
                  np.zeros((len(texts), 0), dtype=bool), text_positions, text_mask)
        return ChunkBatch(*(torch.from_numpy(array) for array in arrays))


class SequenceEncoder(ChunkEncoder):
    """The chunk encoder with e5-base-4k's position ids for short inputs (`position_ids: stretched_short`)."""

    def __init__(self, backbone, pooling: str, position_ids: str):
        super().__init__(backbone, pooling)
        self.stretch = backbone.config.max_position_embeddings // SHORT_INPUT if position_ids == "stretched_short" \
            else 1
        if self.stretch > 1:
            self.group_breaks = (SHORT_INPUT,)  # short and long inputs never share a group (nor position ids)

    def encode(self, inputs: dict[str, torch.Tensor], packed=None):
        width = inputs["input_ids"].shape[1]
        if self.stretch > 1 and width <= SHORT_INPUT:
            positions = torch.arange(width, device=inputs["input_ids"].device) * self.stretch
            inputs = {**inputs, "position_ids": positions.expand(inputs["input_ids"].shape[0], -1)}
        return super().encode(inputs, packed)  # never packed when stretched: its group breaks forbid it


class BiEncoder(ChunkRanker):
    """Cosine of the mean-pooled query and document embeddings (E5, S 3.2)."""

    def __init__(self, prefixes: str = "none", position_ids: str = "sequential", pooling: str = "mean", **kwargs):
        if prefixes not in PREFIXES:
            raise InputError(f"biencoder: prefixes {prefixes!r} is not one of {sorted(PREFIXES)}")
        if position_ids not in POSITION_RULES:
            raise InputError(f"biencoder: position_ids {position_ids!r} is not one of {list(POSITION_RULES)}")
        self.prefixes, self.position_ids = prefixes, position_ids
        super().__init__(pooling=pooling, **kwargs)

    def check_geometry(self, geometry: ChunkGeometry) -> None:
        super().check_geometry(geometry)
        if geometry.pad_query:
            raise InputError("biencoder encodes the query on its own: pad_query has no meaning there")

    def make_head(self, backbone):
        return EmbeddingSimilarity(normalise=True)

    def make_encoder(self, backbone, pooling, head):
        if pooling != "mean":
            raise InputError(f"biencoder pools by the mean of the real tokens (E5); pooling {pooling!r} is not offered")
        return SequenceEncoder(backbone, pooling, self.position_ids)

    def featurizer(self, tokenizer) -> SeparateSequences:
        refuse_overlong(longest_input(self.template, self.geometry, tokenizer, self.prefixes), self.position_limit,
                        self.backbone_name)
        return SeparateSequences(tokenizer, self.geometry, self.prefixes)

    def forward(self, batch: BiEncoderBatch) -> torch.Tensor:
        queries = self.encoder(batch.queries).pooled[:, 0]
        documents = self.encoder(batch.documents).pooled[:, 0]
        with torch.autocast(device_type=queries.device.type, enabled=False):  # the cosine in fp32
            return self.head(queries.float(), documents.float())
