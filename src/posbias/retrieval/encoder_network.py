"""The network of a dense encoder: a batch of token ids in, one vector per text out (not yet normalised).

Which network runs depends on the model and the encoder's `head` setting:

- a sentence-transformers model (its directory has a modules.json): its own modules run in order
  (Transformer, Pooling, then any Dense, LayerNorm or Normalize), so a projection it defines is not dropped;
  with `normalize: false` its Normalize module is left out, so the vectors are the raw pooled ones.
  Its Pooling must agree with the `pooling` setting, so that the settings an index records say what made it;
- `head: ance`: an ANCE checkpoint, whose CLS vector goes through its projection and LayerNorm
  (`posbias.retrieval.ance`);
- otherwise (`head: none`): the Hugging Face backbone's last hidden states, pooled by `pooling` (CLS or mean).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from posbias.backbones import from_pretrained, load_base_model, load_tokenizer, resolve
from posbias.errors import InputError
from posbias.retrieval.encoder_settings import EncoderSettings


@dataclass
class EncoderNetwork:
    module: torch.nn.Module  # forward(input_ids, attention_mask) -> (texts, dim)
    tokenizer: Any
    dim: int
    max_positions: int | None  # the backbone's position embeddings, if it has a limit


def load_network(settings: EncoderSettings) -> EncoderNetwork:
    from sentence_transformers.util import is_sentence_transformer_model

    path = resolve(settings.model)
    if is_sentence_transformer_model(path):
        return _sentence_transformer(settings, path)
    tokenizer = load_tokenizer(settings.model, settings.trust_remote_code)
    if settings.head == "ance":
        from posbias.retrieval.ance import ANCE_DIM, load_ance

        model = load_ance(settings.model)
        return EncoderNetwork(model, tokenizer, ANCE_DIM, model.config.max_position_embeddings)
    from transformers import AutoConfig

    what = "dense encoder"
    config = from_pretrained(AutoConfig, settings.model, what, trust_remote_code=settings.trust_remote_code)
    # the pooler is not read: the hidden states are pooled here
    backbone = load_base_model(settings.model, what, config, settings.trust_remote_code, dropped=("pooler",))
    return EncoderNetwork(PooledBackbone(backbone, settings.pooling), tokenizer, int(backbone.config.hidden_size),
                          getattr(backbone.config, "max_position_embeddings", None))


class PooledBackbone(torch.nn.Module):
    """A Hugging Face backbone's last hidden states pooled into one vector: the CLS one, or the mean of the
    tokens (padding excluded)."""

    def __init__(self, backbone: torch.nn.Module, pooling: str):
        super().__init__()
        self.backbone, self.pooling = backbone, pooling

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.backbone(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state.float()
        if self.pooling == "cls":
            return hidden[:, 0]
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)


class SentenceTransformerModules(torch.nn.Module):
    """A sentence-transformers model run on token ids that were tokenised and batched outside it."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model({"input_ids": input_ids, "attention_mask": attention_mask})["sentence_embedding"]


def _sentence_transformer(settings: EncoderSettings, path: str) -> EncoderNetwork:
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    name = settings.model
    if settings.head != "none":
        raise InputError(f"encoder settings: head {settings.head!r} is for plain checkpoints; {name!r} is a "
                         "sentence-transformers model, which brings its own modules (set head: none)")
    model = SentenceTransformer(path, device="cpu", trust_remote_code=settings.trust_remote_code)
    if not settings.normalize:  # the encoder's setting says whether vectors are unit length, not the model's files
        for key in [key for key, module in model.named_children() if isinstance(module, Normalize)]:
            del model._modules[key]
    modules = list(model)
    if not isinstance(modules[0], Transformer):
        raise InputError(f"encoder {name!r}: a sentence-transformers model must start with a Transformer "
                         f"module to encode text here, not {type(modules[0]).__name__}")
    modes = [module.pooling_mode for module in modules if isinstance(module, Pooling)]
    if modes != [settings.pooling]:
        raise InputError(f"encoder settings: pooling is {settings.pooling!r}, but the sentence-transformers model "
                         f"{name!r} pools by {', '.join(map(repr, modes)) or 'no Pooling module'}; "
                         "set pooling to match")
    config = modules[0].auto_model.config
    return EncoderNetwork(SentenceTransformerModules(model), model.tokenizer,
                          int(model.get_embedding_dimension()),
                          getattr(config, "max_position_embeddings", None))
