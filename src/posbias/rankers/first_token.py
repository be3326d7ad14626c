"""Computing only what a [CLS]-pooled ranker reads: the last layer's output at the first token.

A head that reads the [CLS] vector of the last layer needs, from that layer, the keys and values of every
token but the query projection, attention output and feed-forward block of the first token only. For
BERT-shaped layers (self-attention with `query`/`key`/`value` projections, an `attention.output` block with
the residual and LayerNorm, then `intermediate` and `output`), `first_token_states` runs the backbone
without its last layer and then that layer for the first token. Per token, a layer's linear work is
about 12 H^2 multiply-adds of which keys and values are 2 H^2, so on an L-layer backbone this skips about
(10/12)/L of it (14 % at 6 layers, 7 % at 12), plus the last layer's attention for all but one query.
The result is the full forward's [CLS] vector up to float rounding (tests/rankers/test_first_token.py).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from posbias.remote_code import is_remote_code

# Encoders whose layers are BERT's and whose models apply nothing after the last layer.
BERT_SHAPED_MODEL_TYPES = frozenset({"bert", "electra", "roberta", "xlm-roberta", "camembert"})


def supports_first_token_only(backbone: nn.Module) -> bool:
    config = backbone.config
    if is_remote_code(backbone):  # its layers may carry BERT's names, not BERT's computation
        return False
    if config.model_type not in BERT_SHAPED_MODEL_TYPES or getattr(config, "is_decoder", False):
        return False
    # Relative position schemes change the attention scores, which the last layer here computes itself.
    if getattr(config, "position_embedding_type", "absolute") != "absolute":
        return False
    layers = getattr(getattr(backbone, "encoder", None), "layer", None)
    return bool(layers) and all(hasattr(layers[-1], name) for name in ("attention", "intermediate", "output"))


@contextmanager
def _without_last_layer(backbone: nn.Module):
    """The backbone with its last layer taken out for the duration, which is yielded."""
    encoder = backbone.encoder
    layers = encoder.layer
    encoder.layer = nn.ModuleList(list(layers)[:-1])
    try:
        yield layers[-1]
    finally:
        encoder.layer = layers


def first_token_states(backbone: nn.Module, inputs: dict[str, torch.Tensor],
                       run: Callable[[], torch.Tensor] | None = None) -> torch.Tensor:
    """The last layer's output at the first token, [batch, hidden], for the backbone's `inputs`
    (`input_ids`, `attention_mask`, optionally `token_type_ids`). `run` gives the token states [batch, length,
    hidden] the backbone computes while its last layer is out (by default, from `inputs`; a packed encoder runs
    the packed row and lays it out again)."""
    with _without_last_layer(backbone) as last:
        hidden = run() if run is not None else backbone(**inputs).last_hidden_state
    return _first_token_layer(last, hidden, inputs["attention_mask"].bool())


def _first_token_layer(layer: nn.Module, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    attention = layer.attention.self
    batch, length, _ = hidden.shape
    heads, size = attention.num_attention_heads, attention.attention_head_size

    def split_heads(states: torch.Tensor) -> torch.Tensor:  # [batch, n, H] -> [batch, heads, n, size]
        return states.view(batch, states.shape[1], heads, size).transpose(1, 2)

    first = hidden[:, :1]
    context = F.scaled_dot_product_attention(
        split_heads(attention.query(first)), split_heads(attention.key(hidden)),
        split_heads(attention.value(hidden)), attn_mask=mask[:, None, None, :],
        dropout_p=attention.dropout.p if attention.training else 0.0,
        scale=getattr(attention, "scaling", size ** -0.5))
    attended = layer.attention.output(context.transpose(1, 2).reshape(batch, 1, heads * size), first)
    return layer.output(layer.intermediate(attended), attended)[:, 0]
