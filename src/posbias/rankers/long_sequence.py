"""LongP: the whole (truncated) document in one sequence of a long-context backbone, and its FirstP twin.

The study's LongP rows (S C.1) read up to 1431 document tokens at once with Longformer, Big-Bird, JINA,
MOSAIC or TinyLlama; each FirstP twin is the same model with the document cut to 477 tokens. Both are
`longp` here, told apart by their geometry (`chunk_tokens` = `stride` = `max_doc_tokens`: one sequence).

The featurizer joins query and document as the backbone's own tokenizer joins a text pair
(`posbias.rankers.pair_template`), so nothing assumes [CLS] or [SEP]: a Llama-style decoder reads
`<s> q <s> d`, padded with its end-of-sequence token when it has no pad token. Token types are sent only
where the tokenizer emits them (`model_input_names`). Longformer gets global attention on the tokens
before the query ([CLS]), the real query tokens and the first separator, as the study's authors set it
(for the FirstP twin too). The score is a linear layer on the pooled sequence: `pooling: cls` reads the
first token, `mean` the mean over real tokens (JINA and TinyLlama in the study, S C.1).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from posbias.rankers.base import ChunkRanker
from posbias.rankers.chunking import ChunkBatch, Chunker
from posbias.rankers.geometry import ChunkGeometry, longest_input, refuse_overlong
from posbias.rankers.heads.chunk_scores import ChunkScores
from posbias.rankers.pair_template import PairTemplate

# Backbones whose forward takes a `global_attention_mask`.
GLOBAL_ATTENTION_MODEL_TYPES = frozenset({"longformer"})


class SequencePairFeaturizer(Chunker):
    """One input per (query, document) pair, in the tokenizer's pair template: a `ChunkBatch` of one chunk,
    so the chunk encoder and heads read it unchanged."""

    def __init__(self, tokenizer, geometry: ChunkGeometry, global_attention: bool = False):
        self.global_attention = global_attention
        super().__init__(tokenizer, geometry)

    def special_tokens(self, tokenizer) -> None:
        self.template = PairTemplate.of(tokenizer)
        self.pad_id = self.template.pad_id

    def batch(self, pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> ChunkBatch:
        template = self.template
        layouts = self.layouts(pairs)
        lengths = [template.special_tokens + slots + len(doc) for _, slots, doc, _ in layouts]
        shape = (len(pairs), 1, max(lengths))
        input_ids = np.full(shape, self.pad_id, dtype=np.int64)
        attention = np.zeros(shape, dtype=np.int64)
        token_types = np.zeros(shape, dtype=np.int64)
        global_attention = np.zeros(shape, dtype=np.int64)
        query_mask = np.zeros((len(pairs), max(slots for _, slots, _, _ in layouts)), dtype=bool)
        doc_positions = np.zeros((len(pairs), max(len(doc) for _, _, doc, _ in layouts)), dtype=np.int64)
        doc_mask = np.zeros(doc_positions.shape, dtype=bool)
        prefix, middle, suffix = len(template.prefix), len(template.middle), len(template.suffix)
        for b, (query, slots, doc, _) in enumerate(layouts):
            row, types = input_ids[b, 0], token_types[b, 0]
            query_end = prefix + slots
            doc_start = query_end + middle
            doc_end = doc_start + len(doc)
            row[:prefix] = template.prefix
            row[prefix:prefix + len(query)] = query  # the query's pad slots (pad_query) keep pad_id
            row[query_end:doc_start] = template.middle
            row[doc_start:doc_end] = doc
            row[doc_end:doc_end + suffix] = template.suffix
            attention[b, 0, :doc_end + suffix] = 1
            attention[b, 0, prefix + len(query):query_end] = 0  # the query's padding is masked
            if template.types is not None:
                prefix_types, query_type, middle_types, doc_type, suffix_types = template.types
                types[:prefix], types[prefix:query_end] = prefix_types, query_type
                types[query_end:doc_start], types[doc_start:doc_end] = middle_types, doc_type
                types[doc_end:doc_end + suffix] = suffix_types
            if self.global_attention:  # what precedes the query, its real tokens and the first separator
                global_attention[b, 0, :prefix + len(query)] = 1
                global_attention[b, 0, query_end:query_end + min(middle, 1)] = 1
            query_mask[b, :len(query)] = True
            doc_positions[b, :len(doc)] = np.arange(doc_start, doc_end)
            doc_mask[b, :len(doc)] = True
        arrays = (input_ids, attention, token_types, np.ones((len(pairs), 1), dtype=bool), query_mask,
                  doc_positions, doc_mask)
        batch = ChunkBatch(*(torch.from_numpy(array) for array in arrays))
        if self.global_attention:
            batch.global_attention_mask = torch.from_numpy(global_attention)
        return batch


class LongP(ChunkRanker):
    """A linear score on the pooled sequence of a long-context backbone (S C.1)."""

    def make_head(self, backbone):
        self.global_attention = backbone.config.model_type in GLOBAL_ATTENTION_MODEL_TYPES
        return ChunkScores(backbone.config.hidden_size, "first", self.head_dropout)

    def featurizer(self, tokenizer) -> SequencePairFeaturizer:
        # the template's special tokens are known only now (RoBERTa's pair has 4, Llama's 2)
        refuse_overlong(longest_input(self.template, self.geometry, tokenizer), self.position_limit,
                        self.backbone_name)
        return SequencePairFeaturizer(tokenizer, self.geometry, self.global_attention)
