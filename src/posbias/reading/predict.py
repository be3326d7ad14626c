"""Examples into language-model requests, completions into prediction records in the authors' layout
(spec §2.5), so that their evaluator and ours read the same files.

An `Example` is one input record with its prompt, made exactly as the authors' scripts make it:

- QA: the documents of `ctxs` in file order (the data file fixes the gold position), or none for the closed
  book; with the `random_order` variant the distractors are shuffled around the gold document by a generator of
  the question's own (quirk 13 fixed, see `qa_builder`);
- KV: the pairs of `ordered_kv_records`, with the target first moved to `gold_index` if one is given (the
  authors' KV files hold each example once and move the target at prompt time; ours are materialised per
  position, which needs no move).

The model is any object with `generate(requests, decoding) -> list[Completion]`, such as
`posbias.llm.generate.LanguageModel`, which wraps the prompt (chat or instruction template, chosen in its
config, never sniffed from the model's name: quirk 14 fixed) and caches answers. Each request's `meta` describes the example for the mock
backend: `id`, `answer`, `gold_index`, `n_items`, `example_index`, `n_examples`, `first_item`.

A prediction record is the input record unchanged plus the authors' fields (`model_prompt`, the string that was
sent after wrapping; `model_documents` or `model_ordered_kv_records`; `model_answer`, the raw completion;
`model`, `model_temperature`, `model_top_p`, and for QA `model_prompt_mention_random_ordering` and
`model_use_random_ordering`) and ours (`example_id`, `gold_index`, `n_items`, `variant`, `backend`,
`model_revision`, `max_new_tokens`, `prompt_tokens`, `finish_reason`, `cache_key`, `cache_hit`).
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from typing import Any, Collection, Mapping, Protocol, Sequence

from posbias.errors import InputError
from posbias.io import write_jsonl
from posbias.reading.kv import move_gold, read_kv_records, target_index
from posbias.reading.prompts import closedbook_prompt, kv_prompt, qa_prompt
from posbias.reading.qa_builder import question_rng, shuffle_distractors
from posbias.reading.qa_data import gold_position, model_document, read_qa_records
from posbias.reading.variants import variant as find_variant
from posbias.llm.types import Completion, Decoding, Request

TASKS = ("qa", "kv")
META_KEYS = ("id", "answer", "gold_index", "n_items", "example_index", "n_examples", "first_item")


class Generator(Protocol):
    def generate(self, requests: Sequence[Request], decoding: Decoding) -> list[Completion]: ...


@dataclass(frozen=True)
class Example:
    """One input record and the prompt made from it."""

    task: str
    record: dict  # the input record, unchanged
    example_id: str  # the record's `id` if it has one, else its 0-based index in its file
    example_index: int
    n_examples: int
    prompt: str
    gold_index: int | None  # None: closed book, or documents without a gold one
    n_items: int  # documents or pairs in the prompt
    answer: str  # the first gold answer, or the target value
    first_item: str | None  # the text of document 1, or the value of pair 1
    variant: str
    items: list  # model_documents (QA) or model_ordered_kv_records (KV), in prompt order
    mention_random_ordering: bool = False
    use_random_ordering: bool = False

    def request(self) -> Request:
        meta = {"id": self.example_id, "answer": self.answer, "gold_index": self.gold_index,
                "n_items": self.n_items, "example_index": self.example_index, "n_examples": self.n_examples,
                "first_item": self.first_item}
        return Request(prompt=self.prompt, meta=meta)


def example_id(record: Mapping, index: int) -> str:
    return str(record["id"]) if record.get("id") is not None else str(index)


def qa_examples(records: Sequence[Mapping], variant: str = "default", closedbook: bool = False,
                seed: int = 0) -> list[Example]:
    """The QA examples of `records` (read with `qa_data`), closed-book ones without documents."""
    chosen = find_variant(variant, "qa")
    if closedbook and chosen.name != "default":
        raise InputError(f"the closed-book prompt has no variants; got variant {variant!r}")
    examples = []
    for index, record in enumerate(records):
        question = record["question"]
        if closedbook:
            documents, prompt = [], closedbook_prompt(question)
        else:
            documents = [model_document(ctx) for ctx in record["ctxs"]]
            if chosen.use_random_ordering:
                documents = shuffle_distractors(documents, question_rng(seed, question))
            prompt = qa_prompt(question, documents, chosen.mention_random_ordering, chosen.query_aware)
        examples.append(Example(
            task="qa", record=record, example_id=example_id(record, index), example_index=index,
            n_examples=len(records), prompt=prompt, gold_index=gold_position(documents), n_items=len(documents),
            answer=record["answers"][0], first_item=documents[0]["text"] if documents else None,
            variant=chosen.name, items=documents, mention_random_ordering=chosen.mention_random_ordering,
            use_random_ordering=chosen.use_random_ordering))
    return examples


def kv_examples(records: Sequence[Mapping], variant: str = "default", gold_index: int | None = None) -> list[Example]:
    """The KV examples of `records` (read with `kv`), the target moved to `gold_index` if given."""
    chosen = find_variant(variant, "kv")
    examples = []
    for index, record in enumerate(records):
        pairs = move_gold(record, gold_index)["ordered_kv_records"] if gold_index is not None \
            else copy.deepcopy(record["ordered_kv_records"])
        examples.append(Example(
            task="kv", record=record, example_id=example_id(record, index), example_index=index,
            n_examples=len(records), prompt=kv_prompt(pairs, record["key"], chosen.query_aware),
            gold_index=target_index({**record, "ordered_kv_records": pairs}), n_items=len(pairs),
            answer=record["value"], first_item=pairs[0][1], variant=chosen.name, items=pairs))
    return examples


def predict(examples: Sequence[Example], model: Generator, decoding: Decoding, model_name: str, backend: str,
            model_revision: str | None = None, excluded: Collection[str] = ()) -> list[dict]:
    """Ask `model` every example not in `excluded` (example ids) and return the prediction records."""
    kept = [example for example in examples if example.example_id not in excluded]
    completions = model.generate([example.request() for example in kept], decoding) if kept else []
    if len(completions) != len(kept):
        raise RuntimeError(f"the model answered {len(completions)} of {len(kept)} requests")
    run = {"model": model_name, "backend": backend, "model_revision": model_revision}
    return [prediction_record(example, completion, decoding, run) for example, completion in zip(kept, completions)]


def prediction_record(example: Example, completion: Completion, decoding: Decoding, run: Mapping[str, Any]) -> dict:
    """The input record plus what was asked and answered."""
    out = copy.deepcopy(dict(example.record))
    # A backend that does not report what it sent sent the prompt as it is (no wrapper).
    out["model_prompt"] = completion.sent if completion.sent else example.prompt
    out["model_documents" if example.task == "qa" else "model_ordered_kv_records"] = copy.deepcopy(example.items)
    out["model_answer"] = completion.text
    out["model"] = run["model"]
    out["model_temperature"] = decoding.temperature
    out["model_top_p"] = decoding.top_p
    if example.task == "qa":
        out["model_prompt_mention_random_ordering"] = example.mention_random_ordering
        out["model_use_random_ordering"] = example.use_random_ordering
    out.update(example_id=example.example_id, gold_index=example.gold_index, n_items=example.n_items,
               variant=example.variant, backend=run["backend"], model_revision=run.get("model_revision"),
               max_new_tokens=decoding.max_new_tokens, prompt_tokens=completion.prompt_tokens,
               finish_reason=completion.finish_reason, cache_key=completion.cache_key, cache_hit=completion.cache_hit)
    return out


def read_examples(path: str | os.PathLike, task: str, variant: str = "default", closedbook: bool = False,
                  seed: int = 0, gold_index: int | None = None, limit: int | None = None) -> list[Example]:
    """The examples of a data file: QA (`closedbook`, `seed` for random order) or KV (`gold_index` to move the
    target)."""
    if task == "qa":
        if gold_index is not None:
            raise InputError("QA data files fix the gold position; gold_index applies to KV files only")
        return qa_examples(read_qa_records(path, limit=limit), variant, closedbook, seed)
    if task == "kv":
        if closedbook:
            raise InputError("closed book is a QA setting")
        return kv_examples(read_kv_records(path, limit=limit), variant, gold_index)
    raise InputError(f"task must be one of {TASKS}, got {task!r}")


def write_predictions(path: str | os.PathLike, records: Sequence[Mapping]) -> int:
    """Write prediction records (`.jsonl.gz`), atomically."""
    return write_jsonl(path, records)
