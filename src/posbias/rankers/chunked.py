"""Rankers that pool each chunk into one vector: FirstP, MaxP, SumP, AvgP and PARADE Avg, Max and Attn
(the PARADE Transformers are in `parade_transformer`)."""

from __future__ import annotations

from posbias.errors import InputError
from posbias.rankers.base import ChunkRanker
from posbias.rankers.heads.chunk_scores import ChunkScores
from posbias.rankers.heads.parade import ParadeAttention, ParadeDimAttention, ParadePooling


class FirstP(ChunkRanker):
    """Scores the first chunk only (Dai & Callan): the truncation baseline."""

    def make_head(self, backbone):
        return ChunkScores(backbone.config.hidden_size, "first", self.head_dropout)


class MaxP(ChunkRanker):
    def make_head(self, backbone):
        return ChunkScores(backbone.config.hidden_size, "max", self.head_dropout)


class SumP(ChunkRanker):
    def make_head(self, backbone):
        return ChunkScores(backbone.config.hidden_size, "sum", self.head_dropout)


class AvgP(ChunkRanker):
    def make_head(self, backbone):
        return ChunkScores(backbone.config.hidden_size, "mean", self.head_dropout)


class ParadeAvg(ChunkRanker):
    def make_head(self, backbone):
        return ParadePooling(backbone.config.hidden_size, "mean", self.head_dropout)


class ParadeMax(ChunkRanker):
    def make_head(self, backbone):
        return ParadePooling(backbone.config.hidden_size, "max", self.head_dropout)


class ParadeAttn(ChunkRanker):
    """`attention`: "scalar", the paper's one weight per chunk (S C.2), or "per_dim", the authors' FlexNeuART
    code's Linear(H -> H) and a softmax over chunks per dimension (`heads.parade.ParadeDimAttention`)."""

    ATTENTIONS = {"scalar": ParadeAttention, "per_dim": ParadeDimAttention}

    def __init__(self, attention: str = "scalar", **kwargs):
        if attention not in self.ATTENTIONS:
            raise InputError(f"parade_attn: attention {attention!r} is not one of {sorted(self.ATTENTIONS)}")
        self.attention = attention
        super().__init__(**kwargs)

    def make_head(self, backbone):
        return self.ATTENTIONS[self.attention](backbone.config.hidden_size, self.head_dropout)
