"""FirstP, MaxP, SumP, AvgP and PARADE Avg, Max and Attn (`posbias.rankers.chunked`)."""

from __future__ import annotations

from posbias.rankers.declaration import Argument, Chunking, RankerDeclaration
from posbias.rankers.declarations.base import CHUNK_ARGUMENTS, with_chunk_arguments

FAMILY = "pooled chunk vectors"
MODULE = "posbias.rankers.chunked"

ATTENTION = Argument(
    "attention", {"type": "string", "enum": ["scalar", "per_dim"]},
    "parade_attn: scalar (default, the paper: one weight per chunk, softmax(C . cls_i)) or per_dim (the authors' "
    "FlexNeuART code: Linear(H->H) with bias, a softmax over chunks per dimension)", default="scalar")


def _pooled(name: str, cls: str, chunking: Chunking = Chunking.OVERLAPPING_WINDOWS,
            arguments: tuple[Argument, ...] = CHUNK_ARGUMENTS) -> RankerDeclaration:
    return RankerDeclaration(name, FAMILY, chunking, arguments, f"{MODULE}:{cls}")


RANKERS = (
    _pooled("firstp", "FirstP", Chunking.FIRST_WINDOW),
    _pooled("maxp", "MaxP"),
    _pooled("sump", "SumP"),
    _pooled("avgp", "AvgP"),
    _pooled("parade_avg", "ParadeAvg"),
    _pooled("parade_max", "ParadeMax"),
    _pooled("parade_attn", "ParadeAttn", arguments=with_chunk_arguments(ATTENTION)),
)
