"""Opt-in `torch.compile` of a ranker's backbone (`training.compile`, `rerank.compile`).

The backbone is where the time goes, and its inputs are plain tensors; the rest of a ranker decides which chunks to
encode, how long and in which groups from the batch's host copy, Python work a compiled graph would break at and
recompile for. Compiling takes seconds to minutes before the first step (inductor generates and builds its kernels),
worth it on a GPU job of hours, not on a short CPU run: it is off by default. Compiled and eager scores and gradients
agree up to float rounding (tests/rankers/test_compilation.py).
"""

from __future__ import annotations

import logging
from contextlib import contextmanager

log = logging.getLogger(__name__)


@contextmanager
def compiled_backbone(ranker, enabled: bool):
    """The ranker's backbone compiled for the duration, when `enabled`, and eager again afterwards.

    `nn.Module.compile` compiles the module in place: its parameters and state-dict keys stay as they are, so
    freezing, the optimizer and saving see the same module (`torch.compile(module)` would wrap it and prefix every
    key). `dynamic=True`: every call has another number of chunks and another length, and a graph with symbolic
    sizes serves them all where shape-specialised graphs would recompile for each new one until the recompile limit.
    """
    if not enabled:
        yield
        return
    backbone = ranker.encoder.backbone
    previous = backbone._compiled_call_impl  # what `compile` sets; None while eager
    log.info("compiling %s's backbone with torch.compile (dynamic shapes): the first batches wait for it",
             ranker.registry_name)
    backbone.compile(dynamic=True)
    try:
        yield
    finally:
        backbone._compiled_call_impl = previous
