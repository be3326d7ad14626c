"""The multi-document QA inputs at each gold position (spec §2.2), a reimplementation of the authors'
make_qa_data_from_retrieval_results.py:

- the distractors are the first k-1 retrieved passages whose `hasanswer` is false, in retrieval order, each
  marked with its `original_retrieval_index` (its rank in the raw ranking, from 0) and `isgold: false`;
- the gold document is the NQ annotation's chunk (`nq_annotated_gold.chunked_long_answer`, titled with the
  page), not a retrieved passage, and is put in with `list.insert(gold_index, gold)`: the distractors keep their
  order and those after it move back one slot. So the k-document list is a prefix-extension of the (k-1)-one and
  every position holds the same documents;
- the authors demand k non-answer passages where k-1 suffice (quirk 7): fixed, k-1 are required.

The oracle input is the gold document alone. The random-order variant (appendix C) shuffles the distractors and
keeps the gold at its index; the authors draw from one global `random.seed(0)` in file order, so changing
`limit` or the file order changes every shuffle (quirk 13). Fixed: each question has its own generator seeded
from (seed, question text), its natural key in NQ-Open.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
from typing import Iterable, Mapping, Sequence, TypeVar

from posbias.errors import InputError
from posbias.io import FormatError, write_jsonl
from posbias.reading.matching import has_answer

T = TypeVar("T")
from posbias.reading.qa_data import gold_position, qa_records


def gold_document(record: Mapping) -> dict:
    """The gold document of a record with `nq_annotated_gold` (no id, score or retrieval index, as in the
    authors' files)."""
    gold = record["nq_annotated_gold"]
    return {"title": gold["title"], "text": gold["chunked_long_answer"], "hasanswer": True, "isgold": True}


def distractors(record: Mapping, n: int) -> list[dict]:
    """Copies of the first `n` retrieved passages without an answer, in retrieval order."""
    found = []
    for index, ctx in enumerate(record["ctxs"]):
        if not isinstance(ctx.get("hasanswer"), bool):
            raise InputError(f"ctxs[{index}] has no true/false \"hasanswer\": mark the retrieval results first "
                             f"(posbias.reading.qa_builder.mark_answers)")
        if ctx["hasanswer"] is False and len(found) < n:
            found.append(dict(copy.deepcopy(ctx), original_retrieval_index=index, isgold=False))
    if len(found) < n:
        raise InputError(f"question {record['question']!r} has {len(found)} retrieved passages without an answer; "
                         f"{n} distractors are needed")
    return found


def build_position(record: Mapping, k: int, gold_index: int) -> dict:
    """The record with `ctxs` replaced by k documents: the gold one at `gold_index` among k-1 distractors."""
    if k < 2:
        raise InputError(f"a position needs k >= 2 documents, got k={k}")
    if not 0 <= gold_index < k:
        raise InputError(f"gold index {gold_index} is outside 0..{k - 1} for k={k}")
    ctxs = distractors(record, k - 1)
    ctxs.insert(gold_index, gold_document(record))
    return {**copy.deepcopy(dict(record)), "ctxs": ctxs}


def ends_first(items: Sequence[T]) -> list[T]:
    """Items ranked best first, placed with the best at both ends: ranks 1, 3, 5, ... from the start and 2, 4,
    ... from the end, the worst in the middle (for 5: ranks 1, 3, 5, 4, 2), where Lost in the Middle's readers
    use a document least."""
    front, back = list(items[0::2]), list(items[1::2])
    return front + back[::-1]


def oracle_record(record: Mapping) -> dict:
    """The record with the gold document as its only document (the authors' nq-open-oracle file)."""
    return {**copy.deepcopy(dict(record)), "ctxs": [gold_document(record)]}


def mark_answers(record: Mapping) -> dict:
    """The record with `hasanswer` set on every retrieved passage by DPR's matcher (on the passage text, as DPR
    does), for retrieval results that come without it."""
    answers = record["answers"]
    ctxs = [dict(ctx, hasanswer=has_answer(ctx["text"], answers)) for ctx in record["ctxs"]]
    return {**copy.deepcopy(dict(record)), "ctxs": ctxs}


def question_rng(seed: int, question: str) -> random.Random:
    """A generator of its own for each question: the same (seed, question) shuffles alike in any file order."""
    digest = hashlib.sha256(json.dumps([seed, question]).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def shuffle_distractors(ctxs: list[Mapping], rng: random.Random) -> list[Mapping]:
    """The documents with the distractors in random order and the gold document where it was."""
    gold = gold_position(ctxs)
    if gold is None:
        raise InputError("random ordering keeps the gold document in place, but no document has \"isgold\": true")
    shuffled = [ctx for i, ctx in enumerate(ctxs) if i != gold]
    rng.shuffle(shuffled)
    shuffled.insert(gold, ctxs[gold])
    return shuffled


def write_position_file(source: str | os.PathLike, out: str | os.PathLike, k: int, gold_index: int,
                        limit: int | None = None) -> int:
    """Build one (k, gold index) file from a retrieval-results file (the first `limit` questions); a question
    that cannot be built is an error naming its line. Returns the number of records written."""
    return write_jsonl(out, _built(source, lambda record: build_position(record, k, gold_index), limit))


def write_oracle_file(source: str | os.PathLike, out: str | os.PathLike, limit: int | None = None) -> int:
    """The oracle file (one gold document per question), read by the oracle and closed-book settings."""
    return write_jsonl(out, _built(source, oracle_record, limit))


def _built(source, build, limit: int | None) -> Iterable[dict]:
    count = 0
    for line_no, record in qa_records(source, require_gold=True):
        if limit is not None and count >= limit:
            break
        try:
            yield build(record)
        except InputError as err:
            raise FormatError(source, line_no, str(err)) from None
        count += 1
    if count == 0:  # raised inside the atomic write: no empty output is left behind
        raise InputError(f"{source}: no questions: the file is empty")
