"""Attention-level mitigations of a reader's position bias, on a loaded transformers causal LM of the Llama
architecture (rotary embeddings, `model.model.layers[i].self_attn`), each applied to one prompt at a time:

- `found_in_the_middle`: attention calibration (Hsieh et al. 2024, arXiv 2406.16008). Attention to a document
  mixes its relevance with a bias of its slot; the bias of slot k is the attention a dummy (content-free) document
  receives there (one prefill per slot, the dummy in place of that slot's document), and the calibrated attention
  is the observed minus the dummy's. Here, per chosen layer and head, for every query after the last document
  (the question, the answer cue and each generated token): with a_k the attention mass on document k's n_k tokens,
  b_k the dummy's mean attention per token at slot k (from the prompt's last token) and C = sum_k a_k,

      c_k = max(a_k / n_k - scale * b_k, 0)        m_k = C * n_k c_k / sum_j n_j c_j

  and the weights on document k's tokens are multiplied by m_k / a_k, the row then renormalised (other tokens keep
  theirs). Per-token attention makes the dummy's length immaterial; `scale` 0 (or a zero baseline) changes nothing.
  Parameters: `layers` (default `half-`, the upper half: the layers where attention reads documents as units of
  relevance; our choice) and `scale` (default 1: the paper's plain subtraction). Where the paper re-weights by a
  softmax of the calibrated attention with a temperature, the masses here stay proportional to it: raw attention
  differences are of order 1e-3, so a temperature would have to be tuned per model and context length;
- `ms_poe`: multi-scale positional encoding (Zhang et al. 2024, arXiv 2403.04797). No training: in the chosen
  layers the rotary positions of queries and keys are divided per head by a ratio, the ratios spread evenly from
  `min_ratio` to `max_ratio` (the paper's 1.2 and 1.8) over the heads ordered by a position-awareness score. Our
  score is a documented simplification of the paper's: how far back the last prompt token's unmodified attention
  reaches (attention-weighted mean distance, measured at the prefill); the farthest-reaching heads take the
  smallest ratios (they already read the whole context), the most local the largest. `layers` default `2-`: every
  layer but the first two, as the authors ran Llama-2 (their layers 2..31);
- `attention_sorting`: Peysakhovich & Lerer 2023 (arXiv 2310.01427). One decoding step (a prefill) measures the
  attention each document receives from the prompt's last token (its mass, averaged over layers and heads); the
  documents are sorted by it, most attended last (next to the question), `iterations` times; then the answer is
  generated from the sorted context, unmodified.

The interventions run inside `intervened`, which registers an attention function of ours (the eager computation,
plus the intervention) with transformers' `AttentionInterface`, points the model's config at it and always
restores the model's own implementation. A document's token span is found through the tokenizer's offsets in the
rendered prompt (`document_spans`). The cost in prefills or generations per prompt is `passes_per_prompt`.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from posbias.errors import InputError
from posbias.reading.prompts import format_document, format_documents

KINDS = ("found_in_the_middle", "ms_poe", "attention_sorting")
NAME = "posbias_attention_mitigation"  # the attention implementation registered with transformers
DUMMY_TITLE = "Untitled"
DUMMY_WORDS = "this passage is a placeholder and holds no information".split()
_ACTIVE = contextvars.ContextVar("posbias_attention_mitigation", default=None)


def parse_layers(text: str, n_layers: int | None = None) -> range | None:
    """`A-B` (0-based, both included), `A-` (from A to the last) or `half-` (the upper half) as the layers of a
    model of `n_layers` (None: only the syntax is checked)."""
    match = re.fullmatch(r"(\d+|half)-(\d*)", str(text))
    if not match:
        raise InputError(f"layers {text!r}: expected A-B, A- or half- (0-based layer numbers)")
    if n_layers is None:
        return None
    start = n_layers // 2 if match[1] == "half" else int(match[1])
    end = int(match[2]) + 1 if match[2] else n_layers
    if not 0 <= start < end <= n_layers:
        raise InputError(f"layers {text!r}: the model has layers 0 to {n_layers - 1}")
    return range(start, end)


def passes_per_prompt(attention: Mapping, n_documents: int) -> int:
    """Model passes over a prompt (prefills and the generation) per prompt: the plain reader's is 1."""
    if attention["kind"] == "found_in_the_middle":
        return 1 + n_documents  # a prefill with the dummy at each slot
    if attention["kind"] == "attention_sorting":
        return 1 + attention["iterations"]
    return 1


def dummy_document(document: Mapping) -> dict:
    """A content-free document as long in words as `document`."""
    words = max(len(str(document.get("text") or "").split()), 1)
    return {"title": DUMMY_TITLE, "text": " ".join(itertools.islice(itertools.cycle(DUMMY_WORDS), words))}


def replaced(sent: str, documents: Sequence[Mapping], instead: Sequence[Mapping]) -> str:
    """The prompt with the documents `instead` of its `documents` (numbered from 1 again)."""
    block = format_documents(documents)
    if block not in sent:
        raise InputError("an attention mitigation needs the prompt to hold its documents verbatim")
    return sent.replace(block, format_documents(instead))


def reordered(sent: str, documents: Sequence[Mapping], order: Sequence[int]) -> str:
    """The prompt with its documents in `order` (indices into `documents`)."""
    return replaced(sent, documents, [documents[i] for i in order])


def document_spans(tokenizer, sent: str, documents: Sequence[Mapping], special: bool) -> list[tuple[int, int]]:
    """Each document's tokens [start, end) in `sent` tokenised as the model reads it (`special`: with the
    tokenizer's special tokens), from the tokenizer's character offsets; disjoint, in prompt order."""
    try:
        offsets = tokenizer(sent, add_special_tokens=special, return_offsets_mapping=True)["offset_mapping"]
    except NotImplementedError:
        raise InputError("an attention mitigation needs a fast tokenizer (character offsets)") from None
    spans, at, last = [], 0, 0
    for number, document in enumerate(documents, start=1):
        text = format_document(number, document)
        start = sent.find(text, at)
        if start < 0:
            raise InputError(f"an attention mitigation could not find document {number} in the prompt")
        at = start + len(text)
        tokens = [t for t, (a, b) in enumerate(offsets) if b > a and b > start and a < at]
        spans.append((max(tokens[0], last), tokens[-1] + 1))
        last = spans[-1][1]
    return spans


def _rotate_half(x):
    import torch

    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rerotate(states, positions, ratios, inv_freq):
    """`states` ([batch, heads, seq, dim]) already rotated (RoPE, transformers' half-split layout) at `positions`
    ([seq]) rotated on to positions / ratio, a ratio per head ([heads]): rotations compose, so the extra angle is
    (p / r - p) times each frequency."""
    import torch

    delta = positions.float()[None, :] * (1 / ratios.float()[:, None] - 1)
    angles = delta[..., None] * inv_freq.float()
    angles = torch.cat((angles, angles), dim=-1)[None]
    return states * angles.cos().to(states.dtype) + _rotate_half(states) * angles.sin().to(states.dtype)


@dataclass
class MsPoE:
    layers: range
    min_ratio: float
    max_ratio: float
    inv_freq: object  # the rotary embedding's frequencies
    orders: dict = field(default_factory=dict)  # layer -> heads, the farthest-reaching first

    def ratios(self, layer: int, query, key, mask, scaling):
        import torch

        if layer not in self.orders:  # at the prefill: from the unmodified attention of the last token
            logits = torch.matmul(query[:, :, -1:], key.transpose(2, 3)) * scaling
            if mask is not None:
                logits = logits + mask[:, :, -1:, :]
            weights = torch.softmax(logits.float(), dim=-1)[0, :, 0]
            distance = torch.arange(key.shape[2] - 1, -1, -1, dtype=torch.float32, device=key.device)
            self.orders[layer] = torch.argsort((weights * distance).sum(-1), descending=True, stable=True)
        heads = query.shape[1]
        ratios = torch.empty(heads, device=query.device)
        ratios[self.orders[layer]] = torch.linspace(self.min_ratio, self.max_ratio, heads, device=query.device)
        return ratios

    def rotate(self, layer: int, query, key, mask, scaling):
        import torch

        ratios = self.ratios(layer, query, key, mask, scaling)
        positions = torch.arange(key.shape[2], device=key.device)  # one unpadded sequence: keys at 0..n-1
        return (rerotate(query, positions[key.shape[2] - query.shape[2]:], ratios, self.inv_freq),
                rerotate(key, positions, ratios, self.inv_freq))


@dataclass
class Recorder:
    """The attention mass the last query puts on each span, per layer ([heads, spans])."""

    spans: Sequence[tuple[int, int]]
    masses: dict = field(default_factory=dict)

    def see(self, layer: int, weights) -> None:
        import torch

        row = weights[0, :, -1].float()
        self.masses[layer] = torch.stack([row[:, s:e].sum(-1) for s, e in self.spans], dim=-1)


@dataclass
class Calibration:
    layers: range
    spans: Sequence[tuple[int, int]]
    baseline: Mapping  # layer -> [heads, spans]: the dummy's mean attention per token at each slot
    scale: float = 1.0

    def apply(self, layer: int, weights):
        import torch

        first = max(self.spans[-1][1] - (weights.shape[-1] - weights.shape[-2]), 0)  # first query after them
        if first >= weights.shape[-2] or self.scale == 0:
            return weights
        rows = weights[:, :, first:].float()
        masses = torch.stack([rows[..., s:e].sum(-1) for s, e in self.spans], dim=-1)
        counts = torch.tensor([e - s for s, e in self.spans], dtype=torch.float32, device=rows.device)
        baseline = self.baseline[layer].to(rows.device).float()[None, :, None, :]
        calibrated = (masses / counts - self.scale * baseline).clamp(min=0) * counts
        total = calibrated.sum(-1, keepdim=True)
        target = torch.where(total > 0, masses.sum(-1, keepdim=True) * calibrated / total.clamp(min=1e-30), masses)
        factors = torch.where(masses > 0, target / masses.clamp(min=1e-30), torch.ones_like(masses))
        per_token = torch.ones_like(rows)
        for k, (s, e) in enumerate(self.spans):
            per_token[..., s:e] = factors[..., k:k + 1]
        rows = rows * per_token
        rows = rows / rows.sum(-1, keepdim=True)
        weights = weights.clone()
        weights[:, :, first:] = rows.to(weights.dtype)
        return weights


@dataclass
class _State:
    ms_poe: MsPoE | None = None
    calibration: Calibration | None = None
    recorder: Recorder | None = None


def _attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """transformers' eager attention, in the same operations (so with no intervention the same numbers), with the
    active intervention applied."""
    import torch
    from transformers.models.llama.modeling_llama import repeat_kv

    state, layer = _ACTIVE.get() or _State(), module.layer_idx
    key = repeat_kv(key, module.num_key_value_groups)
    value = repeat_kv(value, module.num_key_value_groups)
    if state.ms_poe is not None and layer in state.ms_poe.layers:
        query, key = state.ms_poe.rotate(layer, query, key, attention_mask, scaling)
    weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        weights = weights + attention_mask
    weights = torch.nn.functional.softmax(weights, dim=-1, dtype=torch.float32).to(query.dtype)
    if state.calibration is not None and layer in state.calibration.layers:
        weights = state.calibration.apply(layer, weights)
    if state.recorder is not None:
        state.recorder.see(layer, weights)
    return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register(NAME, _attention)
    AttentionMaskInterface.register(NAME, eager_mask)  # the additive mask eager attention reads


def _layers(model):
    layers = getattr(getattr(model, "model", None), "layers", None)
    rotary = getattr(getattr(model, "model", None), "rotary_emb", None)
    if not layers or rotary is None or not all(hasattr(layer.self_attn, "num_key_value_groups")
                                               for layer in layers):
        raise InputError(f"an attention mitigation needs a Llama-architecture model (rotary attention in "
                         f"model.model.layers), not {type(model).__name__}")
    return layers, rotary


@contextlib.contextmanager
def intervened(model, ms_poe: MsPoE | None = None, calibration: Calibration | None = None,
               recorder: Recorder | None = None):
    """The model computing its attention with the intervention given (none: eager attention), its own attention
    implementation restored on exit, whatever happens."""
    _layers(model)
    _register()
    before = model.config._attn_implementation
    token = _ACTIVE.set(_State(ms_poe, calibration, recorder))
    model.config._attn_implementation = NAME
    try:
        yield model
    finally:
        model.config._attn_implementation = before
        _ACTIVE.reset(token)


def attention_masses(model, tokenizer, sent: str, spans, special: bool) -> dict:
    """One prefill of `sent`: per layer, the attention mass its last token puts on each span ([heads, spans])."""
    import torch

    encoded = tokenizer(sent, add_special_tokens=special, return_tensors="pt")
    recorder = Recorder(spans)
    with torch.inference_mode(), intervened(model, recorder=recorder):
        model(input_ids=encoded["input_ids"].to(model.device),
              attention_mask=encoded["attention_mask"].to(model.device), use_cache=False, logits_to_keep=1)
    return recorder.masses


def dummy_baseline(model, tokenizer, sent: str, documents: Sequence[Mapping], special: bool) -> dict:
    """Per layer, the mean attention per token a dummy document receives at each slot ([heads, slots]): one
    prefill per slot, the dummy in place of that slot's document."""
    import torch

    baseline: dict = {}
    for k, document in enumerate(documents):
        probing = [*documents[:k], dummy_document(document), *documents[k + 1:]]
        probe = replaced(sent, documents, probing)
        spans = document_spans(tokenizer, probe, probing, special)
        start, end = spans[k]
        for layer, masses in attention_masses(model, tokenizer, probe, spans, special).items():
            baseline.setdefault(layer, torch.zeros(masses.shape[0], len(documents)))[:, k] = masses[:, k].cpu() / (
                end - start)
    return baseline


def attention_order(model, tokenizer, sent: str, documents: Sequence[Mapping], iterations: int,
                    special: bool) -> list[int]:
    """Attention sorting: the documents' order (indices into `documents`) after `iterations` rounds of one
    prefill each, the attention mass each receives from the last token averaged over layers and heads, sorted
    ascending (stable), the most attended last."""
    import torch

    order = list(range(len(documents)))
    for _ in range(iterations):
        current = [documents[i] for i in order]
        probe = reordered(sent, documents, order)
        masses = attention_masses(model, tokenizer, probe, document_spans(tokenizer, probe, current, special), special)
        received = torch.stack([masses[layer] for layer in sorted(masses)]).mean(dim=(0, 1)).tolist()
        order = [order[j] for j in sorted(range(len(order)), key=received.__getitem__)]
    return order


def mitigated_answer(backend, sent: str, decoding, meta: Mapping):
    """The answer of a `posbias.llm.backends.hf.HFCausal` backend to `sent` under the attention mitigation
    `meta["attention"]` (checked by `posbias.audit.mitigations`), over the documents `meta["documents"]`."""
    from posbias.llm import wrappers

    attention, documents = meta["attention"], list(meta["documents"])
    model, tokenizer = backend.model, backend.tokenizer
    special = wrappers.adds_special_tokens(backend.spec.wrapper)
    layers, rotary = _layers(model)
    if attention["kind"] == "attention_sorting":
        order = attention_order(model, tokenizer, sent, documents, attention["iterations"], special)
        return backend.complete(reordered(sent, documents, order), decoding)
    chosen = parse_layers(attention["layers"], len(layers))
    if attention["kind"] == "ms_poe":
        with intervened(model, ms_poe=MsPoE(chosen, attention["min_ratio"], attention["max_ratio"], rotary.inv_freq)):
            return backend.complete(sent, decoding)
    if attention["kind"] != "found_in_the_middle":
        raise InputError(f"unknown attention mitigation {attention['kind']!r}; known: {', '.join(KINDS)}")
    calibration = Calibration(chosen, document_spans(tokenizer, sent, documents, special),
                              dummy_baseline(model, tokenizer, sent, documents, special), attention["scale"])
    with intervened(model, calibration=calibration):
        return backend.complete(sent, decoding)


def _register_answerer() -> None:
    """The hf_causal backend answers an attention-mitigated request through `mitigated_answer` (it cannot import
    this module: the reading layer sits above the language-model layer)."""
    from posbias.llm.backends.hf import register_attention_answerer

    register_attention_answerer(mitigated_answer)


_register_answerer()
