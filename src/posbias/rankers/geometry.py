"""The layout of a cross-encoder input, and whether a backbone has position embeddings for it.

A document (its token ids) is cut to `max_doc_tokens` and split into windows of `chunk_tokens`
tokens every `stride` tokens (stride == chunk_tokens gives disjoint chunks). Each window becomes
one input `[CLS] query [SEP] window [SEP]`, with the query cut to `max_query_tokens`; with
`pad_query` the query is padded to `max_query_tokens` with masked pad tokens, so every window
starts at the same position (as the study's authors did).

This module imports neither torch nor transformers at load time: the workflow checks model
arguments with it when it builds the graph.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from posbias.errors import InputError

SPECIAL_TOKENS = 3  # [CLS], [SEP] after the query, [SEP] after the window

# Architectures whose position ids count from padding_idx + 1 (fairseq's convention), so
# max_position_embeddings = usable positions + pad_token_id + 1 (RoBERTa: 514 = 512 + 2).
PADDING_OFFSET_MODEL_TYPES = frozenset({
    "roberta", "roberta-prelayernorm", "xlm-roberta", "xlm-roberta-xl", "camembert", "longformer", "mpnet",
    "data2vec-text", "ibert", "luke", "xmod",
})


@dataclass(frozen=True)
class ChunkGeometry:
    max_query_tokens: int
    chunk_tokens: int
    stride: int
    max_doc_tokens: int
    pad_query: bool = False  # pad the query to max_query_tokens (masked), so documents start at a fixed position

    def __post_init__(self):
        for name in ("max_query_tokens", "chunk_tokens", "stride", "max_doc_tokens"):
            if getattr(self, name) < 1:
                raise InputError(f"chunk geometry: {name} must be positive, got {getattr(self, name)}")
        if self.stride > self.chunk_tokens:
            raise InputError(f"chunk geometry: stride {self.stride} > chunk_tokens {self.chunk_tokens} would skip text")
        if self.max_doc_tokens < self.chunk_tokens:
            raise InputError(f"chunk geometry: max_doc_tokens {self.max_doc_tokens} < chunk_tokens {self.chunk_tokens}")

    @classmethod
    def from_args(cls, args: Mapping) -> "ChunkGeometry":
        """The geometry of a ranker's arguments (`models.<name>.args`)."""
        return cls(args["max_query_tokens"], args["chunk_tokens"], args["stride"], args["max_doc_tokens"],
                   bool(args.get("pad_query", False)))

    @property
    def max_chunks(self) -> int:
        return 1 + math.ceil(max(0, self.max_doc_tokens - self.chunk_tokens) / self.stride)

    @property
    def max_sequence_length(self) -> int:
        return self.max_query_tokens + self.chunk_tokens + SPECIAL_TOKENS

    def windows(self, n_tokens: int) -> list[tuple[int, int]]:
        """Token spans of the chunks of a document with `n_tokens` tokens (at least one chunk)."""
        n_tokens = min(n_tokens, self.max_doc_tokens)
        spans = [(0, min(self.chunk_tokens, n_tokens))]
        start = self.stride
        while start + self.chunk_tokens - self.stride < n_tokens and len(spans) < self.max_chunks:
            spans.append((start, min(start + self.chunk_tokens, n_tokens)))
            start += self.stride
        return spans


def position_limit(config) -> int | None:
    """How many positions a backbone with this Hugging Face config can encode; None when it has no
    learned position table (ALiBi models extrapolate) or does not say."""
    if getattr(config, "position_embedding_type", None) == "alibi":
        return None
    limit = getattr(config, "max_position_embeddings", None)
    if not isinstance(limit, int):
        return None
    if getattr(config, "model_type", None) in PADDING_OFFSET_MODEL_TYPES:
        limit -= (getattr(config, "pad_token_id", None) or 0) + 1
    return limit


def geometry_limit(backbone: str, trust_remote_code: bool = False) -> int | None:
    """`position_limit` of a backbone, from its config alone (local files only, never the network);
    None when the config cannot be read here (a hub name not in the local cache)."""
    from transformers import AutoConfig

    from posbias.backbones import resolve

    path = resolve(backbone)  # an unknown offline: name is an error, not an unreadable config
    try:
        config = AutoConfig.from_pretrained(path, local_files_only=True,
                                            trust_remote_code=trust_remote_code)
    except (OSError, ValueError):
        return None
    return position_limit(config)


def refuse_overlong(geometry: ChunkGeometry, limit: int | None, backbone: str) -> None:
    """An InputError when the longest input of `geometry` needs more positions than the backbone has
    (the embedding lookup would fail, or silently wrap on some devices)."""
    if limit is not None and geometry.max_sequence_length > limit:
        raise InputError(
            f"model args: chunk_tokens ({geometry.chunk_tokens}) + max_query_tokens ({geometry.max_query_tokens}) + "
            f"{SPECIAL_TOKENS} special tokens = {geometry.max_sequence_length} positions, but backbone {backbone!r} "
            f"has {limit} (max_position_embeddings); lower chunk_tokens or max_query_tokens")


def check_geometry(args: Mapping) -> None:
    """Refuse ranker arguments (`models.<name>.args`) whose inputs are longer than their backbone's
    position embeddings. Reads only the backbone's config; a config that cannot be read offline
    is not checked here (the ranker's constructor checks again with the loaded model)."""
    geometry = ChunkGeometry.from_args(args)
    refuse_overlong(geometry, geometry_limit(args["backbone"], bool(args.get("trust_remote_code", False))),
                    args["backbone"])
