"""The ranker registry: names from the config map to ranker classes.

A ranker's constructor arguments are its config (`models.<name>.args`);
unknown or missing arguments are an error, never silently defaulted. Chunk
geometry is always explicit, so FirstP and MaxP cannot drift apart through a
hidden default.
"""

from __future__ import annotations

import inspect
from typing import Callable

import torch
from torch import nn

from posbias.errors import InputError
from posbias.rankers.aggregators import ParadeAttention, ParadePooling, ScoreAggregator
from posbias.rankers.chunking import ChunkBatch, ChunkGeometry
from posbias.rankers.encoder import ChunkEncoder, load_backbone

RANKERS: dict[str, type["ChunkRanker"]] = {}


def register(name: str) -> Callable[[type], type]:
    def decorate(cls: type) -> type:
        if name in RANKERS:
            raise ValueError(f"ranker {name!r} is registered twice")
        cls.registry_name = name
        RANKERS[name] = cls
        return cls

    return decorate


def build_ranker(name: str, args: dict) -> "ChunkRanker":
    """Construct a registered ranker from its config arguments, strictly."""
    if name not in RANKERS:
        raise InputError(f"unknown ranker {name!r}; registered: {sorted(RANKERS)}")
    cls = RANKERS[name]
    params = inspect.signature(cls.__init__).parameters
    accepted = {p for p in params if p != "self"}
    required = {p for p, spec in params.items() if p != "self" and spec.default is inspect.Parameter.empty}
    unknown, missing = sorted(set(args) - accepted), sorted(required - set(args))
    if unknown or missing:
        raise InputError(f"ranker {name!r}: unknown arguments {unknown}, missing arguments {missing}")
    return cls(**args)


class ChunkRanker(nn.Module):
    """A cross-encoder over document chunks: backbone encoder plus an aggregator."""

    registry_name = "?"

    def __init__(self, backbone: str, max_query_tokens: int, chunk_tokens: int, stride: int,
                 max_doc_tokens: int, pooling: str = "cls", backbone_layers: int | None = None,
                 trust_remote_code: bool = False, dropout: float | None = None):
        super().__init__()
        self.args = {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        self.geometry = ChunkGeometry(max_query_tokens, chunk_tokens, stride, max_doc_tokens)
        self.check_geometry(self.geometry)
        self.encoder = ChunkEncoder(load_backbone(backbone, backbone_layers, trust_remote_code, dropout), pooling)
        self.aggregator = self.make_aggregator(self.encoder.hidden_size)

    def check_geometry(self, geometry: ChunkGeometry) -> None:
        """Rankers with geometry constraints of their own refuse other geometries here."""

    def make_aggregator(self, hidden_size: int) -> nn.Module:
        raise NotImplementedError

    def forward(self, batch: ChunkBatch):
        vectors = self.encoder(batch)
        # The encoder may run under autocast (bf16 keeps 8 significant bits); the aggregator and its
        # scoring layer run in fp32, or scores would round to bf16 and tie (then doc ids would decide).
        with torch.autocast(device_type=vectors.device.type, enabled=False):
            return self.aggregator(vectors.float(), batch.chunk_mask)

    def head_parameters(self):
        """Parameters outside the pretrained backbone (they get their own learning rate)."""
        return list(self.aggregator.parameters())


@register("firstp")
class FirstP(ChunkRanker):
    """Scores the first chunk only (Dai & Callan): the truncation baseline."""

    def check_geometry(self, geometry: ChunkGeometry) -> None:
        if geometry.max_doc_tokens != geometry.chunk_tokens:
            raise InputError(f"firstp reads one chunk: max_doc_tokens ({geometry.max_doc_tokens}) must equal "
                             f"chunk_tokens ({geometry.chunk_tokens}), or chunks would be encoded and ignored")

    def make_aggregator(self, hidden_size):
        return ScoreAggregator(hidden_size, "first")


@register("maxp")
class MaxP(ChunkRanker):
    def make_aggregator(self, hidden_size):
        return ScoreAggregator(hidden_size, "max")


@register("sump")
class SumP(ChunkRanker):
    def make_aggregator(self, hidden_size):
        return ScoreAggregator(hidden_size, "sum")


@register("avgp")
class AvgP(ChunkRanker):
    def make_aggregator(self, hidden_size):
        return ScoreAggregator(hidden_size, "mean")


@register("parade_avg")
class ParadeAvg(ChunkRanker):
    def make_aggregator(self, hidden_size):
        return ParadePooling(hidden_size, "mean")


@register("parade_max")
class ParadeMax(ChunkRanker):
    def make_aggregator(self, hidden_size):
        return ParadePooling(hidden_size, "max")


@register("parade_attn")
class ParadeAttn(ChunkRanker):
    def make_aggregator(self, hidden_size):
        return ParadeAttention(hidden_size)
