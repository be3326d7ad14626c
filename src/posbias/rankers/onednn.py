"""A backbone's fp32 linear layers through oneDNN while scoring on the CPU (`rerank`).

On the CPU an eager `nn.Linear` is a matrix product on weights in their plain layout, and a BERT-shaped
feed-forward block then writes its 4H-wide intermediate and reads it back for the GELU. For inference,
`onednn_linears` swaps each fp32 `nn.Linear` of a backbone for the same product through oneDNN (PyTorch's
`mkldnn._linear_pointwise`, what inductor's frozen CPU graphs call) on weights reordered once into oneDNN's
blocked layout, with the feed-forward block's exact (erf) GELU fused into its first product; on MiniLM-L6 in fp32
on two cores that takes about a fifth of a reranking's CPU time (benchmarks/rerank_throughput.py). The
parameters are the module's own and every layer is put back on exit, so saving, training and the state dict see
nothing. Scores are the eager ones up to float rounding (another kernel's summation order; tests/rankers/
test_onednn.py); nothing is swapped where oneDNN is missing, off the CPU, or under autocast.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn


def onednn_available(device: torch.device, dtype: torch.dtype | None) -> bool:
    """Whether `onednn_linears` applies: a CPU scoring in fp32 (`dtype` None: no autocast) with oneDNN's ops."""
    return (device.type == "cpu" and dtype is None and torch.backends.mkldnn.is_available()
            and hasattr(torch.ops.mkldnn, "_linear_pointwise") and hasattr(torch.ops.mkldnn, "_reorder_linear_weight"))


class OneDNNLinear(nn.Module):
    """`linear` (then the exact GELU, with `gelu`) through oneDNN on its weight reordered once; outside inference
    (a tensor that needs gradients) it falls back to the eager product."""

    def __init__(self, linear: nn.Linear, gelu: bool = False):
        super().__init__()
        self.weight, self.bias = linear.weight, linear.bias  # the same parameters
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.gelu = gelu
        self.packed = torch.ops.mkldnn._reorder_linear_weight(linear.weight.detach(), None)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        if hidden.dtype != torch.float32 or (torch.is_grad_enabled() and hidden.requires_grad):
            out = F.linear(hidden, self.weight, self.bias)
            return F.gelu(out) if self.gelu else out
        attr, algorithm = ("gelu", "none") if self.gelu else ("none", "")  # gelu "none": erf, not tanh
        return torch.ops.mkldnn._linear_pointwise(hidden, self.packed, self.bias, attr, [], algorithm)


def _exact_gelu(module: nn.Module) -> bool:
    """A transformers activation module applying `F.gelu` as it is (erf), nothing else."""
    act = getattr(module, "act", None)
    return type(module).__name__ == "GELUActivation" and act is F.gelu


@contextmanager
def onednn_linears(backbone: nn.Module, enabled: bool = True):
    """Every fp32 `nn.Linear` of `backbone` through oneDNN for the duration (see the module's docstring); a BERT
    intermediate block (`dense`, then an exact-GELU `intermediate_act_fn`) with the GELU fused in."""
    swapped: list[tuple[nn.Module, str, nn.Module]] = []
    if enabled:
        for module in list(backbone.modules()):
            for name, child in list(module.named_children()):
                if type(child) is not nn.Linear or child.weight.dtype != torch.float32:
                    continue
                act = getattr(module, "intermediate_act_fn", None)
                fuse = name == "dense" and isinstance(act, nn.Module) and _exact_gelu(act)
                swapped.append((module, name, child))
                setattr(module, name, OneDNNLinear(child, gelu=fuse))
                if fuse:
                    swapped.append((module, "intermediate_act_fn", act))
                    module.intermediate_act_fn = nn.Identity()
    try:
        yield sum(isinstance(original, nn.Linear) for _, _, original in swapped)
    finally:
        for module, name, original in reversed(swapped):
            setattr(module, name, original)
