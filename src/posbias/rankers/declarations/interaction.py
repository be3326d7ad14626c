"""CEDR-DRMM, CEDR-KNRM, CEDR-PACRR and Neural Model 1 (`posbias.rankers.interaction`): heads over token
states, reading greedy disjoint chunks."""

from __future__ import annotations

from posbias.rankers.declaration import Argument, Chunking, RankerDeclaration
from posbias.rankers.declarations.base import POSITIVE, with_chunk_arguments

FAMILY = "token interactions"
MODULE = "posbias.rankers.interaction"

MASK_QUERY_PADDING = Argument(
    "mask_query_padding", {"type": "boolean"},
    "cedr_drmm only (ours, default true): sum the per-query-token scores over real query tokens only; false sums "
    "all max_query_tokens slots, padded ones included, as CEDR does with its 32 padded slots", default=True)
PROJECTION_SIZE = Argument(
    "projection_size", POSITIVE,
    "neural_model1 only (ours; the study's code is not public): width of the learned query and document "
    "projections (each Linear + LayerNorm); default the backbone's hidden size (768 for BERT-base)", default=None)


def _interaction(name: str, cls: str, *own: Argument) -> RankerDeclaration:
    return RankerDeclaration(name, FAMILY, Chunking.DISJOINT_CHUNKS, with_chunk_arguments(*own), f"{MODULE}:{cls}")


RANKERS = (
    _interaction("cedr_drmm", "CedrDrmmRanker", MASK_QUERY_PADDING),
    _interaction("cedr_knrm", "CedrKnrmRanker"),
    _interaction("cedr_pacrr", "CedrPacrrRanker"),
    _interaction("neural_model1", "NeuralModel1Ranker", PROJECTION_SIZE),
)
