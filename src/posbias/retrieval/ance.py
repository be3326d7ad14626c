"""ANCE (e.g. `castorini/ance-msmarco-doc-firstp`) as its checkpoints store it.

An ANCE checkpoint is a RoBERTa (`roberta.*`) plus a projection of the CLS
vector (`embeddingHead`, Linear) and a LayerNorm (`norm`). `AutoModel` loads
only the RoBERTa and drops the other two with a mere warning, which gives the
raw CLS vector: not ANCE. This model keeps them, and a checkpoint lacking any
of its weights is an error rather than a random initialisation.
"""

from __future__ import annotations

import torch
from transformers import RobertaModel, RobertaPreTrainedModel

from posbias.backbones import resolve
from posbias.errors import InputError

ANCE_DIM = 768  # ANCE's projection outputs 768 values whatever the RoBERTa's width (its training code fixes it)


class AnceEncoder(RobertaPreTrainedModel):
    """`norm(embeddingHead(CLS))`, with the parameter names of the ANCE checkpoints."""

    # The checkpoints also carry layers ANCE was trained from and never uses for retrieval.
    _keys_to_ignore_on_load_unexpected = [r"^roberta\.pooler\.", r"^classifier\."]

    def __init__(self, config):
        super().__init__(config)
        self.roberta = RobertaModel(config, add_pooling_layer=False)
        self.embeddingHead = torch.nn.Linear(config.hidden_size, ANCE_DIM)
        self.norm = torch.nn.LayerNorm(ANCE_DIM)
        self.post_init()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        cls = self.roberta(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state[:, 0]
        return self.norm(self.embeddingHead(cls))


def load_ance(name: str) -> AnceEncoder:
    """The ANCE model of checkpoint `name` (hub name or directory); missing weights are an error naming them."""
    model, loading = AnceEncoder.from_pretrained(resolve(name), output_loading_info=True)
    missing = sorted(loading["missing_keys"])
    if missing:
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        raise InputError(f"encoder checkpoint {name!r} lacks weights of head 'ance' (a RoBERTa with "
                         f"embeddingHead and norm): missing {shown}")
    return model
