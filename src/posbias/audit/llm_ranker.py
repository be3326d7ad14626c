"""A language model as a pointwise ranker: asked of each (query, document) pair whether the document is relevant.

The score is the model's preference for "yes" over "no" as its next token, log P(yes) - log P(no) (each summed
over the words' spellings "yes", "Yes", " yes", " Yes"), when the backend exposes next-token log-probabilities (a
local causal model: `HFCausal.next_token_logprobs`); that orders pairs the way a probability of relevance does and
rarely ties. Any other backend (an API, a server, the mock) answers in words through the response cache, and the
answer scores 1 when it starts with "yes" and 0 otherwise: ties are then common, which the batteries' reciprocal
rank takes as the mean over the tied orders.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from posbias.audit.models import Pair, PairModel
from posbias.llm.types import Decoding, Request

PROMPT = ("Query: {query}\n\nDocument: {document}\n\n"
          "Is the document relevant to the query? Answer yes or no.")
YES, NO = ("yes", "Yes", " yes", " Yes"), ("no", "No", " no", " No")
ANSWER = Decoding(max_new_tokens=3)


def relevance_prompt(query: str, document: str) -> str:
    return PROMPT.replace("{query}", query).replace("{document}", document)


def answered_yes(text: str) -> bool:
    return text.strip().lower().startswith("yes")


class PointwiseLLM(PairModel):
    def __init__(self, language_model):
        self.lm = language_model
        backend = language_model.backend
        self.by_logprobs = hasattr(backend, "next_token_logprobs")
        spec = language_model.spec
        own = getattr(backend.config, "max_position_embeddings", None) if spec.backend.startswith("hf_") else None
        self.window = spec.context or own  # the context the spec gives, else a local model's own

    def score(self, pairs: Sequence[Pair], metas: Sequence[Mapping] | None = None) -> np.ndarray:
        metas = metas or [{}] * len(pairs)
        requests = [Request(prompt=relevance_prompt(q, d), meta=dict(meta)) for (q, d), meta in zip(pairs, metas)]
        if self.by_logprobs:
            backend = self.lm.backend
            sents = [backend.render(request) for request in requests]
            logprobs = backend.next_token_logprobs(sents, YES + NO)
            yes, no = logprobs[:, :len(YES)], logprobs[:, len(YES):]
            return np.logaddexp.reduce(yes, axis=1) - np.logaddexp.reduce(no, axis=1)
        completions = self.lm.generate(requests, ANSWER, progress=False)
        return np.array([1.0 if answered_yes(c.text) else 0.0 for c in completions])

    def count_tokens(self, text: str) -> int:
        backend = self.lm.backend
        tokenizer = getattr(backend, "tokenizer", None) if self.lm.spec.backend.startswith("hf_") else None
        if tokenizer is None:
            return len(text.split())
        return len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    def describe(self) -> dict:
        spec = self.lm.spec
        return {"backend": spec.backend, "model": spec.model, "wrapper": spec.wrapper, "revision": spec.revision,
                "scored by": "next-token log-probabilities" if self.by_logprobs else "the answer's first word",
                "window": self.window}
