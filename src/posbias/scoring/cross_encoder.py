"""An outside cross-encoder: any Hugging Face sequence-classification model (an MS MARCO MiniLM or ELECTRA
cross-encoder, a bge reranker, a posbias ranker exported in that format) scoring (query, document) pairs with its
own classification head and its own length limit, zero-shot.

Two views of a long document:
- the model's own view, the pair cut to the model's limit with the document truncated (FirstP, as the model would
  be used as it comes): `score` without a view;
- the document read window by window (`view_window` tokens every `view_stride`), each window scored as a pair of
  its own, the scores aggregated by `max` (MaxP) or `first` (FirstP's window): does aggregation alone remove the
  model's position bias? `score` with a view, or `score_windows`.

A model with one output scores by its logit; with two, by the second label's logit minus the first's (the
relevant class against the other), which orders pairs as the softmax probability of relevance does. Its code runs
only with `trust_remote_code`; `revision` pins the weights of a hub model.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import torch

from posbias.backbones import from_pretrained, load_model
from posbias.device import autocast, autocast_dtype, pick_device
from posbias.errors import InputError
from posbias.scoring.protocol import Pair, Scorer, tokens_in

AGGREGATIONS = ("max", "first")


def classification_config(name: str, revision: str | None = None, trust_remote_code: bool = False):
    """The model's config, refused unless it declares a sequence-classification head."""
    from transformers import AutoConfig

    config = from_pretrained(AutoConfig, name, "cross-encoder", revision=revision,
                             trust_remote_code=trust_remote_code)
    architectures = getattr(config, "architectures", None) or []
    if not any(a.endswith("ForSequenceClassification") for a in architectures):
        raise InputError(f"cannot use {name!r} as a cross-encoder: it has no sequence-classification head "
                         f"(its architectures: {', '.join(architectures) or 'none declared'})")
    if config.num_labels not in (1, 2):
        raise InputError(f"cannot use {name!r} as a cross-encoder: its head has {config.num_labels} labels; "
                         f"a relevance score needs 1 (a logit) or 2 (not relevant, relevant)")
    return config


class CrossEncoder(Scorer):
    """A sequence-classification model scoring (query, document) pairs (see the module's docstring)."""

    def __init__(self, name: str, revision: str | None = None, trust_remote_code: bool = False,
                 device: str = "auto", precision: str = "fp32", max_length: int | None = None,
                 batch_size: int = 32, view_window: int | None = None, view_stride: int | None = None,
                 aggregate: str = "max"):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.name = name
        self.config = classification_config(name, revision, trust_remote_code)
        options = dict(revision=revision, trust_remote_code=trust_remote_code)
        self.tokenizer = from_pretrained(AutoTokenizer, name, "cross-encoder's tokenizer", **options)
        self.model = load_model(AutoModelForSequenceClassification, name, "cross-encoder", **options)
        self.device = pick_device(device)
        self.dtype = autocast_dtype(self.device, precision)
        self.model.to(self.device).eval()
        limits = [limit for limit in (max_length, self.tokenizer.model_max_length,
                                      getattr(self.config, "max_position_embeddings", None)) if limit]
        self.max_length = min(limits)  # the model's own limit, or a smaller one asked for
        self.batch_size = batch_size
        # the most of a document the model reads in one pair: its limit less the special tokens (a query's tokens
        # come out of it too, so a long query leaves less)
        room = self.max_length - self.tokenizer.num_special_tokens_to_add(pair=True)
        self.view = (view_window, view_stride or view_window, aggregate) if view_window else None
        if self.view and not (self.view[1] <= self.view[0] <= room):
            raise InputError(f"cross-encoder {name!r}: windows need stride <= window <= {room} (the model's limit "
                             f"less its special tokens), got window {self.view[0]} and stride {self.view[1]}")
        # the model's own reach, windows or not: the audit's batteries size their haystacks and grid lengths by it
        # and the reach fraction divides by it, so a window-aggregation mitigation is swept over its base's documents
        self.window = room

    def score(self, pairs: Sequence[Pair], metas: Sequence[Mapping] | None = None) -> np.ndarray:
        """Each pair's score through the model's view: its own (the document truncated) or its windows."""
        pairs = list(pairs)
        scores = self.score_windows(pairs, *self.view) if self.view else self.score_truncated(pairs)
        return np.asarray(scores, dtype=np.float64)

    @torch.inference_mode()
    def score_truncated(self, pairs: list[tuple[str, str]]) -> list[float]:
        """Each (query, document) pair's score, the document truncated to the model's limit (the model's own
        tokenizer builds the pair, special tokens and all)."""
        scores = []
        for start in range(0, len(pairs), self.batch_size):
            queries, documents = zip(*pairs[start:start + self.batch_size])
            batch = self.tokenizer(list(queries), list(documents), truncation="only_second",
                                   max_length=self.max_length, padding=True, return_tensors="pt")
            if getattr(self.config, "type_vocab_size", 2) < 2:  # one segment embedding (RoBERTa): no type ids
                batch.pop("token_type_ids", None)
            batch = {key: value.to(self.device) for key, value in batch.items()}
            with autocast(self.device, self.dtype):
                logits = self.model(**batch).logits.float()
            relevance = logits[:, 0] if logits.shape[1] == 1 else logits[:, 1] - logits[:, 0]
            scores.extend(relevance.cpu().tolist())
        return scores

    def windows(self, document: str, window: int, stride: int) -> list[str]:
        """The document's windows of `window` tokens every `stride` (the last may be shorter), as the text each
        spans (cut at the tokens' character offsets, so a window is read as a pair of its own)."""
        if window < 1 or stride < 1:
            raise InputError(f"window and stride must be positive, got {window} and {stride}")
        offsets = self.tokenizer(document, add_special_tokens=False, return_offsets_mapping=True,
                                 verbose=False)["offset_mapping"]
        if not offsets:
            return [document]
        starts = list(range(0, max(len(offsets) - window, 0) + 1, stride))
        if starts[-1] + window < len(offsets):  # the stride stepped over the tail: one more window reads it
            starts.append(starts[-1] + stride)
        return [document[offsets[s][0]:offsets[min(s + window, len(offsets)) - 1][1]] for s in starts]

    def score_windows(self, pairs: list[tuple[str, str]], window: int, stride: int,
                      aggregate: str = "max") -> list[float]:
        """Each pair's score over its document's windows, aggregated by `aggregate` (max, or first: the first
        window's)."""
        if aggregate not in AGGREGATIONS:
            raise InputError(f"aggregate {aggregate!r} is not one of {', '.join(AGGREGATIONS)}")
        expanded, owners = [], []
        for i, (query, document) in enumerate(pairs):
            texts = self.windows(document, window, stride)
            texts = texts[:1] if aggregate == "first" else texts
            expanded += [(query, text) for text in texts]
            owners += [i] * len(texts)
        best = [float("-inf")] * len(pairs)
        for owner, value in zip(owners, self.score_truncated(expanded) if expanded else []):
            best[owner] = max(best[owner], value)
        return best

    def count_tokens(self, text: str) -> int:
        return tokens_in(self.tokenizer, text)

    def input_count(self, pairs: Sequence[Pair]) -> int:
        if not self.view:
            return len(pairs)
        return sum(len(self.windows(document, self.view[0], self.view[1])) for _, document in pairs)

    def describe(self) -> dict:
        return {"architecture": (self.config.architectures or ["?"])[0], "labels": self.config.num_labels,
                "max_length": self.max_length, "window": self.window,
                "view": f"windows of {self.view[0]} every {self.view[1]}, {self.view[2]}" if self.view else "FirstP"}
