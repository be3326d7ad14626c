"""The chunk encoder: a Hugging Face backbone that turns chunked cross-encoder inputs into features."""

from __future__ import annotations

import torch
from torch import nn

from posbias.backbones import from_pretrained
from posbias.errors import InputError
from posbias.rankers.chunking import ChunkBatch
from posbias.rankers.features import TOKEN_LAYERS, ChunkFeatures


def load_backbone(name: str, layers: int | None = None, trust_remote_code: bool = False,
                  dropout: float | None = None, what: str = "backbone") -> nn.Module:
    """Load a pretrained encoder without its pooler; `layers` keeps only the first N transformer layers,
    and `dropout` (when given) replaces every dropout probability of the backbone's config. `what` names
    the model in errors (a PARADE ranker's "aggregator" is loaded the same way)."""
    from transformers import AutoConfig, AutoModel
    from transformers.utils import logging as hf_logging

    config = from_pretrained(AutoConfig, name, what, trust_remote_code=trust_remote_code)
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
        model = from_pretrained(AutoModel, name, what, config=config, trust_remote_code=trust_remote_code)
    finally:
        hf_logging.set_verbosity(verbosity)
    if getattr(model, "pooler", None) is not None:
        model.pooler = None  # no ranker reads it: left in, it would be saved, counted and never trained
    return model


class ChunkEncoder(nn.Module):
    """Encodes only the valid chunks of a batch. Returns `ChunkFeatures`: one vector per chunk (the
    [CLS] vector, or the element-wise mean or max of the token vectors), and, when `token_layers`
    asks for them, the token states of the query and of the re-joined document."""

    POOLINGS = ("cls", "mean", "max")

    def __init__(self, backbone: nn.Module, pooling: str = "cls", token_layers: str | None = None):
        super().__init__()
        if pooling not in self.POOLINGS:
            raise InputError(f"pooling {pooling!r} is not one of {self.POOLINGS}")
        if token_layers not in TOKEN_LAYERS:
            raise ValueError(f"token_layers {token_layers!r} is not one of {TOKEN_LAYERS}")
        self.backbone = backbone
        self.pooling = pooling
        self.token_layers = token_layers
        self.hidden_size = backbone.config.hidden_size

    def forward(self, batch: ChunkBatch) -> ChunkFeatures:
        valid = batch.chunk_mask
        inputs = {"input_ids": batch.input_ids[valid], "attention_mask": batch.attention_mask[valid]}
        if getattr(self.backbone.config, "type_vocab_size", 0) > 1:
            inputs["token_type_ids"] = batch.token_type_ids[valid]
        output = self.backbone(**inputs, output_hidden_states=self.token_layers == "all")
        tokens = output.last_hidden_state
        real = inputs["attention_mask"].unsqueeze(-1).bool()
        if self.pooling == "cls":
            hidden = tokens[:, 0]
        elif self.pooling == "max":
            hidden = tokens.masked_fill(~real, float("-inf")).max(dim=1).values
        else:
            weights = real.to(tokens.dtype)
            hidden = (tokens * weights).sum(dim=1) / weights.sum(dim=1)
        pooled = hidden.new_zeros((*valid.shape, hidden.shape[-1]))
        pooled[valid] = hidden
        features = ChunkFeatures(pooled, valid)
        if self.token_layers is None:
            return features
        states = torch.stack(output.hidden_states, dim=1) if self.token_layers == "all" else tokens.unsqueeze(1)
        return self.token_states(features, batch, states)

    @staticmethod
    def token_states(features: ChunkFeatures, batch: ChunkBatch, states: torch.Tensor) -> ChunkFeatures:
        """Add the query's and the document's token states, from the states of the valid chunks
        ([valid chunks, layers, length, hidden]); padding-only chunks are zeros and never gathered."""
        n_batch, n_chunks = batch.chunk_mask.shape
        _, n_layers, length, hidden = states.shape
        full = states.new_zeros((n_batch, n_chunks, n_layers, length, hidden))
        full[batch.chunk_mask] = states
        query_slots = batch.query_mask.shape[1]
        features.query_states = full[:, 0, :, 1:1 + query_slots]  # the query is the same in every chunk
        joined = full.transpose(1, 2).reshape(n_batch, n_layers, n_chunks * length, hidden)
        index = batch.doc_positions[:, None, :, None].expand(-1, n_layers, -1, hidden)
        features.doc_states = joined.gather(2, index)
        features.query_mask, features.doc_mask = batch.query_mask, batch.doc_mask
        return features
