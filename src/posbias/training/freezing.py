"""Keep the lower part of a pretrained backbone fixed during fine-tuning.

Freezing the embedding block and the first N transformer layers means autograd
never runs backward through them, which on a CPU cuts the cost of a training
step roughly in proportion (the embedded default trains the top 2 of 4 layers).
"""

from __future__ import annotations

from torch import nn

from posbias.errors import InputError

def transformer_layers(backbone: nn.Module) -> nn.ModuleList:
    """The backbone's stack of transformer layers: its ModuleList of num_hidden_layers blocks."""
    n_layers = getattr(backbone.config, "num_hidden_layers", None)
    for module in backbone.modules():
        if isinstance(module, nn.ModuleList) and len(module) == n_layers:
            return module
    raise InputError(f"cannot find the {n_layers} transformer layers of {type(backbone).__name__}")


def freeze_lower(backbone: nn.Module, embeddings: bool, layers: int) -> None:
    """Freeze the embedding block (word, position and type embeddings with their norm) and the first `layers` layers."""
    if layers and not embeddings:
        raise InputError("training.freeze_layers needs training.freeze_embeddings: frozen layers under "
                         "trainable embeddings would still need a backward pass")
    if embeddings:
        block = getattr(backbone, "embeddings", None) or backbone.get_input_embeddings()
        block.requires_grad_(False)
    if layers:
        stack = transformer_layers(backbone)
        if layers >= len(stack):
            raise InputError(f"training.freeze_layers={layers} leaves none of the backbone's "
                             f"{len(stack)} layers to train")
        for layer in stack[:layers]:
            layer.requires_grad_(False)
