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

from posbias.errors import InputError
from posbias.llm.types import Decoding, Request
from posbias.scoring.protocol import Pair, Scorer, tokens_in

PROMPT = ("Query: {query}\n\nDocument: {document}\n\n"
          "Is the document relevant to the query? Answer yes or no.")
YES, NO = ("yes", "Yes", " yes", " Yes"), ("no", "No", " no", " No")
ANSWER = Decoding(max_new_tokens=3)


def relevance_prompt(query: str, document: str) -> str:
    return PROMPT.replace("{query}", query).replace("{document}", document)


def answered_yes(text: str) -> bool:
    return text.strip().lower().startswith("yes")


class PointwiseLLM(Scorer):
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
            yes, no = self.answer_tokens()
            sents = [backend.render(request) for request in requests]
            logprobs = backend.next_token_logprobs(sents, [*yes.values(), *no.values()])
            return (np.logaddexp.reduce(logprobs[:, :len(yes)], axis=1)
                    - np.logaddexp.reduce(logprobs[:, len(yes):], axis=1))
        completions = self.lm.generate(requests, ANSWER, progress=False)
        return np.array([1.0 if answered_yes(c.text) else 0.0 for c in completions])

    def answer_tokens(self) -> tuple[dict[int, str], dict[int, str]]:
        """The first token of each spelling of yes and of no, each token once and none on both sides (a tokenizer
        whose " yes" begins with a bare space piece would otherwise count that piece for both answers)."""
        tokenizer = self.lm.backend.tokenizer
        first = {side: {} for side in ("yes", "no")}
        for side, words in (("yes", YES), ("no", NO)):
            for word in words:
                first[side].setdefault(tokenizer(word, add_special_tokens=False)["input_ids"][0], word)
        shared = set(first["yes"]) & set(first["no"])
        yes, no = ({i: w for i, w in first[side].items() if i not in shared} for side in ("yes", "no"))
        if not yes or not no:
            raise InputError(f"model {self.lm.spec.model!r}: its tokenizer starts yes and no with the same tokens; "
                             f"a pointwise ranker cannot tell them apart")
        return yes, no

    def count_tokens(self, text: str) -> int:
        backend = self.lm.backend
        tokenizer = getattr(backend, "tokenizer", None) if self.lm.spec.backend.startswith("hf_") else None
        if tokenizer is None:
            return len(text.split())
        return tokens_in(tokenizer, text)

    @property
    def token_unit(self) -> str:
        """What `count_tokens` counts: the model's tokens, or words for a model whose tokenizer is not at hand."""
        return "tokens" if self.lm.spec.backend.startswith("hf_") else "words"

    def describe(self) -> dict:
        spec = self.lm.spec
        return {"backend": spec.backend, "model": spec.model, "wrapper": spec.wrapper, "revision": spec.revision,
                "scored by": "next-token log-probabilities" if self.by_logprobs else "the answer's first word",
                "window": self.window, "lengths in": self.token_unit}
