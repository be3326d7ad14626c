"""The chunk encoder: a Hugging Face backbone that turns cross-encoder inputs into chunk vectors."""

from __future__ import annotations

import torch
from torch import nn

from posbias.backbones import from_pretrained
from posbias.errors import InputError
from posbias.rankers.chunking import ChunkBatch


def load_backbone(name: str, layers: int | None = None, trust_remote_code: bool = False,
                  dropout: float | None = None) -> nn.Module:
    """Load a pretrained encoder; `layers` keeps only the first N transformer layers, and
    `dropout` (when given) replaces every dropout probability of the backbone's config."""
    from transformers import AutoConfig, AutoModel
    from transformers.utils import logging as hf_logging

    config = from_pretrained(AutoConfig, name, "backbone", trust_remote_code=trust_remote_code)
    if layers:
        config.num_hidden_layers = layers
    if dropout is not None:
        # Names differ between architectures (hidden_dropout_prob, attention_dropout, ...).
        for key, value in config.to_dict().items():
            if "dropout" in key and isinstance(value, float):
                setattr(config, key, dropout)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # dropping layers on purpose makes a long "unexpected keys" report
    try:
        return from_pretrained(AutoModel, name, "backbone", config=config, trust_remote_code=trust_remote_code)
    finally:
        hf_logging.set_verbosity(verbosity)


class ChunkEncoder(nn.Module):
    """Encodes only the valid chunks of a batch and returns one vector per chunk:
    the [CLS] vector, or the element-wise mean or max of the token vectors."""

    POOLINGS = ("cls", "mean", "max")

    def __init__(self, backbone: nn.Module, pooling: str = "cls"):
        super().__init__()
        if pooling not in self.POOLINGS:
            raise InputError(f"pooling {pooling!r} is not one of {self.POOLINGS}")
        self.backbone = backbone
        self.pooling = pooling
        self.hidden_size = backbone.config.hidden_size

    def forward(self, batch: ChunkBatch) -> torch.Tensor:
        """Return chunk vectors [batch, chunks, hidden], zeros for padding-only chunks."""
        valid = batch.chunk_mask
        inputs = {"input_ids": batch.input_ids[valid], "attention_mask": batch.attention_mask[valid]}
        if getattr(self.backbone.config, "type_vocab_size", 0) > 1:
            inputs["token_type_ids"] = batch.token_type_ids[valid]
        tokens = self.backbone(**inputs).last_hidden_state
        real = inputs["attention_mask"].unsqueeze(-1).bool()
        if self.pooling == "cls":
            hidden = tokens[:, 0]
        elif self.pooling == "max":
            hidden = tokens.masked_fill(~real, float("-inf")).max(dim=1).values
        else:
            weights = real.to(tokens.dtype)
            hidden = (tokens * weights).sum(dim=1) / weights.sum(dim=1)
        vectors = hidden.new_zeros((*valid.shape, hidden.shape[-1]))
        vectors[valid] = hidden
        return vectors
