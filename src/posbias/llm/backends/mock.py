"""A deterministic stand-in for a language model: it reads the request's `meta` (never a model), so tests
and dry runs know every answer exactly. `spec.model` names the kind:

- `oracle`: the gold answer, `meta["answer"]`;
- `order_biased`: a judge with a known position bias, for the judges' order checks: `oracle` when
  `meta["order"]` is "original" (`posbias.llm.types.ORIGINAL_ORDER`), and "0" for any other order (a chunk's
  sentences reversed, the RAG judge's blocks swapped), which UMBRELA's parser reads as grade 0 and the RAG verdict
  as NO. So it flips exactly the items the oracle calls positive, and its consistency is known exactly;
- `first_item`: `meta["first_item"]` (the first document's text, the first key-value pair's value);
- `u_curve`: the gold answer for the first fraction p of the examples and "I don't know." for the rest, with p
  a U-shaped function of the gold position: 1 with one item (oracle), `closed_book` (0.25) with none, else
  floor + (1 - floor) * (2r - 1)^2 at relative position r = gold_index / (n_items - 1) (`floor` 0.5). So the
  accuracy at each position is known exactly, and the correct sets of two positions are nested;
- `echo`: what was sent (the last message's content for a message list);
- `identity` / `reverse`: the permutation "[1] > [2] > ... > [n]" (or reversed), n = `meta["n_items"]`.

Token counts are whitespace words. The meta fields a kind reads join the cache key (`key_fields`): two
requests that send the same text but expect different answers never share one.
"""

from __future__ import annotations

from typing import Mapping

from posbias.errors import InputError
from posbias.llm import wrappers
from posbias.llm.backends.base import Answer, Backend, cut_at_stop
from posbias.llm.spec import ModelSpec
from posbias.llm.types import ORIGINAL_ORDER, Decoding, Request

UNKNOWN = "I don't know."
REORDERED = "0"  # what `order_biased` says to a rearranged prompt: grade 0 to UMBRELA's parser, NO to the RAG judge's
# The meta fields each kind reads.
READS = {"oracle": ("answer",), "order_biased": ("answer", "order"), "first_item": ("first_item",),
         "u_curve": ("answer", "example_index", "n_examples", "n_items", "gold_index"),
         "echo": (), "identity": ("n_items",), "reverse": ("n_items",)}


def u_curve_p(n_items: int, gold_index: int | None, floor: float = 0.5, closed_book: float = 0.25) -> float:
    """The fraction of examples `u_curve` answers correctly with the gold item at `gold_index` of `n_items`."""
    if n_items == 1:
        return 1.0
    if gold_index is None:
        return closed_book
    r = gold_index / (n_items - 1)
    return floor + (1 - floor) * (2 * r - 1) ** 2


def words(sent: str | list) -> int:
    if isinstance(sent, str):
        return len(sent.split())
    return sum(len(str(message.get("content", "")).split()) for message in sent)


class MockBackend(Backend):
    WRAPPERS = tuple(name for name in wrappers.WRAPPERS if name != "chat_template")  # it has no tokenizer
    OPTIONS = ("floor", "closed_book")

    def __init__(self, spec: ModelSpec):
        super().__init__(spec)
        if spec.model not in READS:
            raise InputError(f"mock model {spec.model!r} is not one of {', '.join(READS)}")
        self.kind = spec.model

    def identity(self) -> dict:
        return {**super().identity(), "options": dict(self.spec.options)}

    def key_fields(self, request: Request) -> dict:
        return {"meta": {name: request.meta.get(name) for name in READS[self.kind]}}

    def complete(self, sent: str | list, decoding: Decoding, meta: Mapping | None = None) -> Answer:
        text, _ = cut_at_stop(self._answer(sent, meta or {}), decoding.stop)
        return Answer(text, "stop", words(sent), len(text.split()))

    def _answer(self, sent: str | list, meta: Mapping) -> str:
        missing = [name for name in READS[self.kind] if name not in meta]
        if missing:
            raise ValueError(f"mock model {self.kind!r} reads request.meta {missing}, which the request lacks")
        if self.kind == "echo":
            return sent if isinstance(sent, str) else str(sent[-1].get("content", ""))
        if self.kind == "order_biased":
            return str(meta["answer"]) if meta["order"] == ORIGINAL_ORDER else REORDERED
        if self.kind in ("oracle", "first_item"):
            return str(meta[READS[self.kind][0]])
        if self.kind in ("identity", "reverse"):
            order = range(1, meta["n_items"] + 1)
            return " > ".join(f"[{i}]" for i in (reversed(order) if self.kind == "reverse" else order))
        p = u_curve_p(meta["n_items"], meta["gold_index"], self.spec.options.get("floor", 0.5),
                      self.spec.options.get("closed_book", 0.25))
        correct = (meta["example_index"] + 0.5) / meta["n_examples"] < p
        return str(meta["answer"]) if correct else UNKNOWN
