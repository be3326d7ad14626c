"""Attention calibration of a sentence-transformers bi-encoder at inference time: the attention the pooled tokens
pay is spread evenly over the document's stretches, so that text late in a passage weighs as much in the
embedding as text at its start (Michail, Schuhmacher, Opitz, Clematide and Sennrich 2026, "Attention Calibration
for Position-Fair Dense Information Retrieval", arXiv 2606.02737, adapting Schuhmacher et al. 2026, "Information
Representation Fairness in Long-Document Embeddings", arXiv 2601.16934).

The method, as those papers describe it (and the authors' released code documents it; this module is our own):

- the calibrated attention rows are the ones pooling reads: the first token's ([CLS]) for CLS pooling, the last
  token's for last-token pooling, every token's for mean (and any other) pooling;
- the keys are cut into consecutive *baskets* of `basket` tokens (the last one may be shorter); the pooling
  token itself (CLS: the first; last-token: the first and the last) is a basket of its own;
- within a row, each basket's attention is scaled so that every basket receives the same share (1 / the number of
  baskets), its tokens keeping their proportions inside it; the calibrated row is then mixed with the original,
  `strength` x calibrated + (1 - strength) x original (the 2606.02737 paper's strength coefficient lambda);
- only the last `depth` share of the layers is calibrated (the paper's "layer depth"), and a text with fewer
  content tokens than one basket is left as it is (nothing to balance);
- the defaults are the paper's single configuration: B = 128, lambda = 0.5, 50% layer depth, which lowered PSI in
  all 16 of its PosIR settings (length quartile x model x retrieval setting).

The intervention (`calibrated`) is a context manager on a loaded `SentenceTransformer`: inside it the transformer
computes attention through a function registered with transformers' attention interface (eager attention, the
calibration applied to the softmax of the chosen layers); on leaving, the model's attention implementation is
restored and every hook removed, also when encoding fails. A model whose attention does not go through that
interface (a remote-code model with its own kernels) is refused, one line, rather than silently left uncalibrated.
"""

from __future__ import annotations

import contextlib
import math
import threading
from dataclasses import dataclass
from typing import Iterator

from posbias.errors import InputError

IMPLEMENTATION = "posbias_calibrated"  # the name registered with transformers' attention interfaces
POOLED_ROWS = ("cls", "mean", "last")  # which rows are calibrated: pooling's first, every, or last token


@dataclass(frozen=True)
class Calibration:
    basket: int = 128  # tokens per basket (B)
    strength: float = 0.5  # lambda: 0 leaves the attention as it is, 1 calibrates it fully
    depth: float = 0.5  # the share of the layers calibrated, counted from the last

    def __post_init__(self):
        if not isinstance(self.basket, int) or self.basket < 1:
            raise InputError(f"attention calibration: basket must be a positive whole number, got {self.basket!r}")
        for key in ("strength", "depth"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
                raise InputError(f"attention calibration: {key} must be a number in (0, 1], got {value!r}")

    def layers(self, n_layers: int) -> range:
        """The calibrated layers: the last `depth` share of them (at least one)."""
        count = min(n_layers, max(1, math.ceil(self.depth * n_layers - 1e-9)))
        return range(n_layers - count, n_layers)


def calibrate_weights(weights, valid, rows: str, calibration: Calibration):
    """Post-softmax attention `weights` (batch, heads, queries, keys) of a self-attention layer calibrated:
    `valid` (batch, keys) marks the real tokens (either padding side), `rows` says which query rows pooling reads
    (`POOLED_ROWS`). Rows not calibrated, padding and texts shorter than one basket come back unchanged."""
    import torch

    batch, _, n_queries, n_keys = weights.shape
    valid = valid.to(device=weights.device, dtype=torch.bool)
    lengths = valid.sum(dim=1)
    rank = valid.long().cumsum(dim=1) - 1  # each real token's index among the real tokens
    first, last = valid & (rank == 0), valid & (rank == (lengths - 1).unsqueeze(1))
    # the pooling token(s) as baskets of their own: CLS pooling its first token, last-token pooling both ends
    lead, tail = int(rows in ("cls", "last")), int(rows == "last")
    content = lengths - lead - tail
    n_baskets = torch.div(content + calibration.basket - 1, calibration.basket, rounding_mode="floor") + lead + tail
    basket = torch.div((rank - lead).clamp(min=0), calibration.basket, rounding_mode="floor") + lead
    if lead:
        basket = torch.where(first, torch.zeros_like(basket), basket)
    if tail:
        basket = torch.where(last, (n_baskets - 1).unsqueeze(1).expand_as(basket), basket)
    spare = int(n_baskets.max()) if batch else 0  # padding gathers in a basket of its own, never read
    basket = torch.where(valid, basket, torch.full_like(basket, spare))
    keys = valid.view(batch, 1, 1, n_keys)
    index = basket.view(batch, 1, 1, n_keys).expand_as(weights)
    totals = torch.zeros(*weights.shape[:3], spare + 1, dtype=weights.dtype, device=weights.device)
    share = totals.scatter_add(-1, index, weights * keys).gather(-1, index)
    tiny = torch.finfo(weights.dtype).tiny
    # each basket's tokens keep their proportions; every basket gets 1 / n_baskets of the row
    even = torch.where(keys & (share > 0), weights / share.clamp(min=tiny), torch.zeros_like(weights))
    even = even / n_baskets.view(batch, 1, 1, 1).to(weights.dtype)
    even = even / even.sum(-1, keepdim=True).clamp(min=tiny)  # baskets no row attends to (all zero) drop out
    chosen = valid if rows == "mean" else (first if rows == "cls" else last)
    chosen = chosen[:, :n_queries] & (content >= calibration.basket).unsqueeze(1)
    mixed = calibration.strength * even + (1 - calibration.strength) * weights
    return torch.where(chosen.view(batch, 1, n_queries, 1), mixed, weights)


class _State(threading.local):
    """What the registered attention function reads during one encode: the batch's token mask."""

    valid = None


_STATE = _State()


def _attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """Eager attention, its softmax calibrated in the layers `calibrated` marked (the others as they are)."""
    import torch

    scaling = query.size(-1) ** -0.5 if scaling is None else scaling
    scores = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        if attention_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attention_mask, torch.finfo(scores.dtype).min)
        else:
            scores = scores + attention_mask
    weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    marked = getattr(module, "_posbias_calibration", None)
    if marked is not None:
        calibration, rows, seen = marked
        valid = _STATE.valid
        if valid is None or valid.shape != (weights.shape[0], weights.shape[-1]):
            valid = torch.ones(weights.shape[0], weights.shape[-1], dtype=torch.bool, device=weights.device)
        weights = calibrate_weights(weights, valid, rows, calibration)
        seen.append(module.layer_idx)
    weights = torch.nn.functional.dropout(weights, p=dropout, training=module.training)
    return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register(IMPLEMENTATION, _attention)
    AttentionMaskInterface.register(IMPLEMENTATION, eager_mask)  # additive masks, as eager attention reads them


def pooled_rows(model) -> str:
    """Which rows pooling reads (`POOLED_ROWS`), from the model's sentence-transformers Pooling module."""
    pooling = next((module for module in model if type(module).__name__ == "Pooling"), None)
    modes = getattr(pooling, "pooling_mode", None) or ()
    modes = {modes} if isinstance(modes, str) else set(modes)
    if modes == {"cls"}:
        return "cls"
    if modes == {"lasttoken"}:
        return "last"
    return "mean"  # mean, max, weighted mean or a mix: every token's row reaches the embedding


def _attention_layers(transformer) -> dict[int, object]:
    """The self-attention modules of a transformers encoder by layer index (those that carry `layer_idx`)."""
    return {module.layer_idx: module for module in transformer.modules()
            if isinstance(getattr(module, "layer_idx", None), int) and "Attention" in type(module).__name__
            and "Cross" not in type(module).__name__ and hasattr(module, "config")}


@contextlib.contextmanager
def calibrated(model, calibration: Calibration) -> Iterator[dict]:
    """Inside the context, `model` (a loaded `SentenceTransformer`) encodes with calibrated attention; the
    model is restored on leaving, whatever happened. Yields what was calibrated: layers, rows, and the count of
    calibrated attention calls so far (`calls`), which a caller can check after encoding."""
    transformer = model[0].auto_model
    layers = _attention_layers(transformer)
    n_layers = getattr(transformer.config, "num_hidden_layers", None) or len(layers)
    chosen = list(calibration.layers(n_layers))
    if not layers or any(index not in layers for index in chosen):
        raise InputError(f"attention calibration: {type(transformer).__name__} has no self-attention layers by "
                         f"index (layer_idx) for layers {chosen}; it cannot be calibrated")
    _register()
    rows, seen = pooled_rows(model), []
    original = transformer.config._attn_implementation

    def keep_mask(module, args, kwargs):
        mask = kwargs.get("attention_mask")
        _STATE.valid = None if mask is None else mask.bool()

    hook = transformer.register_forward_pre_hook(keep_mask, with_kwargs=True)
    try:
        for index in chosen:
            layers[index]._posbias_calibration = (calibration, rows, seen)
        transformer.set_attn_implementation(IMPLEMENTATION)
        yield {"layers": chosen, "rows": rows, "calls": seen}
    finally:
        hook.remove()
        for index in chosen:
            layers[index].__dict__.pop("_posbias_calibration", None)
        transformer.set_attn_implementation(original)
        _STATE.valid = None


def encode_calibrated(model, calibration: Calibration, encode, texts, **options):
    """`encode(texts, **options)` (the model's `encode_query` or `encode_document`) inside `calibrated`, refused
    when no calibrated layer ran (the model's attention does not go through transformers' interface)."""
    with calibrated(model, calibration) as done:
        vectors = encode(texts, **options)
    if texts and not done["calls"]:
        raise InputError(f"attention calibration: {type(model[0].auto_model).__name__} did not compute its "
                         f"attention through transformers' attention interface; it cannot be calibrated")
    return vectors
