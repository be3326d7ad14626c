"""The bi-encoder (`posbias.rankers.bi_encoder`): the cosine of query and document embeddings (E5)."""

from __future__ import annotations

from posbias.rankers.declaration import Argument, Chunking, InputTemplate, RankerDeclaration
from posbias.rankers.declarations.base import POOLING, with_chunk_arguments

PREFIXES = Argument(
    "prefixes", {"type": "string", "enum": ["none", "e5"]},
    "biencoder only: text before the query and the document; none (default, as the study's authors ran E5-4K) or "
    "e5 ('query: ' and 'passage: ', the E5 convention); prefix tokens come on top of max_query_tokens and "
    "max_doc_tokens", default="none")
POSITION_IDS = Argument(
    "position_ids", {"type": "string", "enum": ["sequential", "stretched_short"]},
    "biencoder only: sequential (default), or stretched_short, e5-base-4k's rule: an input of at most 512 tokens "
    "gets position ids 0, s, 2s, ... with s = max_position_embeddings // 512", default="sequential")

RANKERS = (RankerDeclaration("biencoder", "bi-encoder", Chunking.ONE_SEQUENCE,
                             with_chunk_arguments(PREFIXES, POSITION_IDS, POOLING.with_default("mean")),
                             "posbias.rankers.bi_encoder:BiEncoder", InputTemplate.SINGLE),)
