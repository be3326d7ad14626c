"""The ranker registry: names from the config map to ranker classes.

A ranker's constructor arguments are its config (`models.<name>.args`);
unknown or missing arguments are an error, never silently defaulted. Chunk
geometry is always explicit, so FirstP and MaxP cannot drift apart through a
hidden default. `build_ranker` records the arguments it checked, with the
defaults it filled in, as `ranker.args`: a checkpoint rebuilds the ranker from them.
"""

from __future__ import annotations

import inspect
from typing import Callable

import torch
from torch import nn

from posbias.errors import InputError
from posbias.rankers.aggregators import ParadeAttention, ParadePooling, ScoreAggregator
from posbias.rankers.chunking import ChunkBatch
from posbias.rankers.encoder import ChunkEncoder, load_backbone
from posbias.rankers.geometry import ChunkGeometry, position_limit, refuse_overlong

RANKERS: dict[str, type["ChunkRanker"]] = {}


def register(name: str) -> Callable[[type], type]:
    def decorate(cls: type) -> type:
        if name in RANKERS:
            raise ValueError(f"ranker {name!r} is registered twice")
        cls.registry_name = name
        RANKERS[name] = cls
        return cls

    return decorate


def constructor_parameters(cls: type) -> dict[str, inspect.Parameter]:
    """The named constructor arguments of a ranker class, by name. A subclass that takes `**kwargs`
    and passes them on to its parent's `__init__` accepts the parent's arguments too."""
    parameters: dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        passes_on = False
        for name, spec in inspect.signature(klass.__init__).parameters.items():
            if spec.kind is inspect.Parameter.VAR_KEYWORD:
                passes_on = True
            elif name != "self" and spec.kind is not inspect.Parameter.VAR_POSITIONAL:
                parameters.setdefault(name, spec)
        if not passes_on:
            break
    return parameters


def build_ranker(name: str, args: dict) -> "ChunkRanker":
    """Construct a registered ranker from its config arguments, strictly; `ranker.args` records them
    with the defaults of the arguments left out (what a checkpoint needs to rebuild it)."""
    if name not in RANKERS:
        raise InputError(f"unknown ranker {name!r}; registered: {sorted(RANKERS)}")
    cls = RANKERS[name]
    params = constructor_parameters(cls)
    required = {p for p, spec in params.items() if spec.default is inspect.Parameter.empty}
    unknown, missing = sorted(set(args) - set(params)), sorted(required - set(args))
    if unknown or missing:
        raise InputError(f"ranker {name!r}: unknown arguments {unknown}, missing arguments {missing}")
    ranker = cls(**args)
    ranker.args = {p: args[p] if p in args else spec.default for p, spec in params.items()}
    return ranker


class ChunkRanker(nn.Module):
    """A cross-encoder over document chunks: backbone encoder plus an aggregator."""

    registry_name = "?"

    args: dict  # the constructor arguments, set by `build_ranker`

    def __init__(self, backbone: str, max_query_tokens: int, chunk_tokens: int, stride: int,
                 max_doc_tokens: int, pooling: str = "cls", backbone_layers: int | None = None,
                 trust_remote_code: bool = False, dropout: float | None = None, head_dropout: float = 0.0,
                 pad_query: bool = False):
        """`dropout` replaces the backbone's own dropout probabilities; `head_dropout` is the dropout on
        the vector the scoring layer reads; `pad_query` pads queries to `max_query_tokens` (masked)."""
        super().__init__()
        self.geometry = ChunkGeometry(max_query_tokens, chunk_tokens, stride, max_doc_tokens, pad_query)
        self.check_geometry(self.geometry)
        model = load_backbone(backbone, backbone_layers, trust_remote_code, dropout)
        refuse_overlong(self.geometry, position_limit(model.config), backbone)
        self.encoder = ChunkEncoder(model, pooling)
        self.aggregator = self.make_aggregator(self.encoder.hidden_size, head_dropout)

    def check_geometry(self, geometry: ChunkGeometry) -> None:
        """Rankers with geometry constraints of their own refuse other geometries here."""

    def make_aggregator(self, hidden_size: int, head_dropout: float) -> nn.Module:
        raise NotImplementedError

    def forward(self, batch: ChunkBatch):
        vectors = self.encoder(batch)
        # The encoder may run under autocast (bf16 keeps 8 significant bits); the aggregator and its
        # scoring layer run in fp32, or scores would round to bf16 and tie (then doc ids would decide).
        with torch.autocast(device_type=vectors.device.type, enabled=False):
            return self.aggregator(vectors.float(), batch.chunk_mask)

    def head_parameters(self):
        """Every parameter outside the pretrained backbone (they get their own learning rate)."""
        backbone = {id(p) for p in self.encoder.backbone.parameters()}
        return [p for p in self.parameters() if id(p) not in backbone]


@register("firstp")
class FirstP(ChunkRanker):
    """Scores the first chunk only (Dai & Callan): the truncation baseline."""

    def check_geometry(self, geometry: ChunkGeometry) -> None:
        if geometry.max_doc_tokens != geometry.chunk_tokens:
            raise InputError(f"firstp reads one chunk: max_doc_tokens ({geometry.max_doc_tokens}) must equal "
                             f"chunk_tokens ({geometry.chunk_tokens}), or chunks would be encoded and ignored")

    def make_aggregator(self, hidden_size, head_dropout):
        return ScoreAggregator(hidden_size, "first", head_dropout)


@register("maxp")
class MaxP(ChunkRanker):
    def make_aggregator(self, hidden_size, head_dropout):
        return ScoreAggregator(hidden_size, "max", head_dropout)


@register("sump")
class SumP(ChunkRanker):
    def make_aggregator(self, hidden_size, head_dropout):
        return ScoreAggregator(hidden_size, "sum", head_dropout)


@register("avgp")
class AvgP(ChunkRanker):
    def make_aggregator(self, hidden_size, head_dropout):
        return ScoreAggregator(hidden_size, "mean", head_dropout)


@register("parade_avg")
class ParadeAvg(ChunkRanker):
    def make_aggregator(self, hidden_size, head_dropout):
        return ParadePooling(hidden_size, "mean", head_dropout)


@register("parade_max")
class ParadeMax(ChunkRanker):
    def make_aggregator(self, hidden_size, head_dropout):
        return ParadePooling(hidden_size, "max", head_dropout)


@register("parade_attn")
class ParadeAttn(ChunkRanker):
    def make_aggregator(self, hidden_size, head_dropout):
        return ParadeAttention(hidden_size, head_dropout)
