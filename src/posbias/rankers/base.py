"""The chunked cross-encoder ranker: a featurizer, an encoder and a head.

- The featurizer (`featurizer(tokenizer)`, a `Chunker`) turns query and document token ids into
  `[CLS] query [SEP] window [SEP]` chunks laid out by the ranker's `ChunkGeometry`.
- The encoder (`ChunkEncoder`) runs the pretrained backbone on the valid chunks and returns
  `ChunkFeatures`: pooled chunk vectors, plus the token states its head asks for.
  (A late-interaction ranker replaces both: `posbias.rankers.late_interaction`.)
- The head (`posbias.rankers.heads`) turns the features into one score per document.

A declared ranker (`posbias.rankers.declarations`) only says which head it has (`make_head`); the
geometry it accepts and how it lays out an input come from its declaration (`Chunking`, `InputTemplate`),
and `check_geometry` adds a rule of its own where it has one. A ranker with constructor arguments of its own sets
them as attributes before calling this constructor, which builds the head; `build_ranker` records
every argument for the checkpoint.
"""

from __future__ import annotations

import torch
from torch import nn

from posbias.errors import InputError
from posbias.rankers.catalog import BY_NAME
from posbias.rankers.chunking import ChunkBatch, Chunker
from posbias.rankers.declaration import InputTemplate, RankerDeclaration
from posbias.rankers.encoder import ChunkEncoder, load_backbone
from posbias.rankers.geometry import ChunkGeometry, longest_input, position_limit, refuse_overlong

# The learning-rate groups a ranker may put its parameters in, and the training setting each one
# follows (`posbias.training.recipe.TrainingSettings`).
PARAMETER_GROUPS = ("backbone", "head", "aggregator")


class ChunkRanker(nn.Module):
    """A cross-encoder over document chunks: backbone encoder plus a head."""

    registry_name = "?"
    declaration: RankerDeclaration | None = None  # set with registry_name by `build_ranker`

    args: dict  # the constructor arguments, set by `build_ranker`

    def __init__(self, backbone: str, max_query_tokens: int, chunk_tokens: int, stride: int,
                 max_doc_tokens: int, pooling: str = "cls", backbone_layers: int | None = None,
                 trust_remote_code: bool = False, dropout: float | None = None, head_dropout: float = 0.0,
                 pad_query: bool = False, backbone_dtype: str = "float32"):
        """`dropout` replaces the backbone's own dropout probabilities; `head_dropout` is the dropout on
        the vector the scoring layer reads; `pad_query` pads queries to `max_query_tokens` (masked);
        `backbone_dtype` is the dtype of the backbone's weights (the head's stay fp32)."""
        super().__init__()
        self.geometry = ChunkGeometry(max_query_tokens, chunk_tokens, stride, max_doc_tokens, pad_query)
        self.check_geometry(self.geometry)
        model = load_backbone(backbone, backbone_layers, trust_remote_code, dropout, dtype=backbone_dtype)
        self.backbone_name, self.position_limit = backbone, position_limit(model.config)
        refuse_overlong(longest_input(self.template, self.geometry), self.position_limit, backbone)
        self.head_dropout = head_dropout
        head = self.make_head(model)
        self.encoder = self.make_encoder(model, pooling, head)
        self.head = head

    def _declared(self) -> RankerDeclaration | None:
        """The ranker's declaration: the one `build_ranker` set, else the one naming this class (a class built
        directly); None for a class no declaration names (a test's own)."""
        if self.declaration is not None:
            return self.declaration
        target = f"{type(self).__module__}:{type(self).__qualname__}"
        return next((d for d in BY_NAME.values() if d.cls == target), None)

    @property
    def template(self) -> InputTemplate:
        """How an input's tokens are laid out (its declaration's; undeclared: chunks)."""
        declared = self._declared()
        return declared.template if declared is not None else InputTemplate.CHUNK

    def check_geometry(self, geometry: ChunkGeometry) -> None:
        """Refuse a geometry that the ranker's way of reading a document (its declaration's `chunking`) does not
        allow; a ranker with a rule of its own adds it here, after calling this."""
        declared = self._declared()
        refusal = declared and declared.chunking.refusal(declared.name, geometry.chunk_tokens, geometry.stride,
                                                         geometry.max_doc_tokens)
        if refusal:
            raise InputError(refusal)

    def make_head(self, backbone: nn.Module) -> nn.Module:
        """The head, given the loaded backbone (its config says the hidden size and layer count)."""
        raise NotImplementedError

    def make_encoder(self, backbone: nn.Module, pooling: str, head: nn.Module) -> nn.Module:
        """The encoder around the loaded backbone (kept as its `backbone` attribute: training freezes its
        lower layers and checkpoints save it on its own). A ranker with another featurizer, whose batches
        are not `ChunkBatch`es, brings the encoder that reads them (PARADE LATEIR)."""
        return ChunkEncoder(backbone, pooling, head.token_layers)

    def featurizer(self, tokenizer) -> Chunker:
        """What turns query and document token ids into this ranker's input batches."""
        return Chunker(tokenizer, self.geometry)

    def forward(self, batch: ChunkBatch) -> torch.Tensor:
        features = self.encoder(batch)
        # The encoder may run under autocast (bf16 keeps 8 significant bits); the head runs in fp32, or
        # scores would round to bf16 and tie (then doc ids would decide).
        with torch.autocast(device_type=features.chunk_mask.device.type, enabled=False):
            return self.head(features.float())

    def parameter_groups(self) -> dict[str, list[nn.Parameter]]:
        """Parameters by learning-rate group (`PARAMETER_GROUPS`): the pretrained backbone's, and everything
        else as the head's. A ranker with a pretrained aggregator moves it to "aggregator"."""
        backbone = list(self.encoder.backbone.parameters())
        seen = {id(p) for p in backbone}
        return {"backbone": backbone, "head": [p for p in self.parameters() if id(p) not in seen]}

    def parameter_counts(self) -> dict[str, int]:
        """How many parameters each group holds (Table 11)."""
        return {group: sum(p.numel() for p in params) for group, params in self.parameter_groups().items()}

    def head_parameters(self) -> list[nn.Parameter]:
        """Every parameter outside the pretrained backbone."""
        backbone = {id(p) for p in self.encoder.backbone.parameters()}
        return [p for p in self.parameters() if id(p) not in backbone]

    def auxiliary_models(self) -> dict[str, nn.Module]:
        """Pretrained models besides the backbone, by the constructor argument that names them (PARADE
        PRETR's aggregator); a checkpoint stores their configs so that loading needs no network."""
        return {}
