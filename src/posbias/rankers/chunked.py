"""Rankers that pool each chunk into one vector: FirstP, MaxP, SumP, AvgP and PARADE Avg, Max and Attn."""

from __future__ import annotations

from posbias.errors import InputError
from posbias.rankers.base import ChunkRanker
from posbias.rankers.geometry import ChunkGeometry
from posbias.rankers.heads.chunk_scores import ChunkScores
from posbias.rankers.heads.parade import ParadeAttention, ParadePooling
from posbias.rankers.registry import register


@register("firstp")
class FirstP(ChunkRanker):
    """Scores the first chunk only (Dai & Callan): the truncation baseline."""

    def check_geometry(self, geometry: ChunkGeometry) -> None:
        if geometry.max_doc_tokens != geometry.chunk_tokens:
            raise InputError(f"firstp reads one chunk: max_doc_tokens ({geometry.max_doc_tokens}) must equal "
                             f"chunk_tokens ({geometry.chunk_tokens}), or chunks would be encoded and ignored")

    def make_head(self, backbone):
        return ChunkScores(backbone.config.hidden_size, "first", self.head_dropout)


@register("maxp")
class MaxP(ChunkRanker):
    def make_head(self, backbone):
        return ChunkScores(backbone.config.hidden_size, "max", self.head_dropout)


@register("sump")
class SumP(ChunkRanker):
    def make_head(self, backbone):
        return ChunkScores(backbone.config.hidden_size, "sum", self.head_dropout)


@register("avgp")
class AvgP(ChunkRanker):
    def make_head(self, backbone):
        return ChunkScores(backbone.config.hidden_size, "mean", self.head_dropout)


@register("parade_avg")
class ParadeAvg(ChunkRanker):
    def make_head(self, backbone):
        return ParadePooling(backbone.config.hidden_size, "mean", self.head_dropout)


@register("parade_max")
class ParadeMax(ChunkRanker):
    def make_head(self, backbone):
        return ParadePooling(backbone.config.hidden_size, "max", self.head_dropout)


@register("parade_attn")
class ParadeAttn(ChunkRanker):
    def make_head(self, backbone):
        return ParadeAttention(backbone.config.hidden_size, self.head_dropout)
