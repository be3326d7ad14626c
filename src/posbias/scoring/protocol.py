"""The one face of anything that scores (query, document) pairs: a trained ranker, a cross-encoder, a bi-encoder,
BM25 or a language model asked about relevance. The bias probes, the audit's batteries and the mitigations ask it
the same three things: the scores of many pairs in one call, how much of a document it reads at once, and how long
a text is in its own tokens."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Mapping, Sequence

import numpy as np

Pair = tuple[str, str]  # (query, document)


def tokens_in(tokenizer, text: str) -> int:
    """The text's length in a Hugging Face tokenizer's tokens, no special tokens (what `Scorer.count_tokens` gives
    for a scorer with a tokenizer)."""
    return len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])


def distinct(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The distinct texts in first-seen order, and each text's row among them: a scorer encodes each text once."""
    rows: dict[str, int] = {}
    positions = np.fromiter((rows.setdefault(text, len(rows)) for text in texts), dtype=np.int64, count=len(texts))
    return list(rows), positions


class Scorer(ABC):
    """M(query, document) for a batch of pairs."""

    window: int | None = None  # document tokens read at once (None: no limit known)

    @abstractmethod
    def score(self, pairs: Sequence[Pair], metas: Sequence[Mapping] | None = None) -> np.ndarray:
        """One float64 score per pair, in order; `metas` describe each pair (only mock language models read them)."""

    def count_tokens(self, text: str) -> int:
        """The text's length in the scorer's own tokens (no special tokens); whitespace-separated words unless the
        scorer has a tokenizer."""
        return len(text.split())

    def truncated(self, documents: Sequence[str]) -> np.ndarray:
        """Whether each document is longer than the scorer reads (cut off at the end); none without a window."""
        if self.window is None:
            return np.zeros(len(documents), dtype=bool)
        return np.array([self.count_tokens(document) > self.window for document in documents], dtype=bool)

    def describe(self) -> dict:
        """What a card's provenance shows of the loaded model."""
        return {"window": self.window}

    def input_count(self, pairs: Sequence[Pair]) -> int:
        """How many inputs the model computes to score `pairs` (one each, unless it reads windows): the cost the
        mitigation table compares."""
        return len(pairs)
