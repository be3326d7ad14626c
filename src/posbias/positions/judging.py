"""Judging a document's chunks with a language model (UMBRELA's bing prompt) and finding the first relevant one.

Every prompt goes through the response cache (`posbias.llm`), so a rerun replays and a killed job keeps what it
paid for. Requests carry `meta["answer"]` only when the caller knows the relevant passages (the embedded
collection): the mock `oracle` judge answers with it (grade 3 where a chunk holds a whole relevant passage, else
0); every other backend ignores meta, and it is no part of their cache keys. `meta["order"]` says the chunk is
as the document has it (`posbias.positions.order_check` sends it rearranged), which only the mock `order_biased`
reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from posbias.llm.types import ORIGINAL_ORDER
from posbias.positions import umbrela
from posbias.positions.matching import normalise

NO_RELEVANT_CHUNK = -1
ORACLE_RELEVANT = 3
MIN_GRADE = 1  # a chunk graded this or more is relevant (the study's first relevant chunk: UMBRELA grade >= 1)


@dataclass(frozen=True)
class Judgment:
    chunk: int
    answer: str
    grade: int | None  # None: the answer held no grade in 0-3


def oracle_grade(chunk_text: str, passages: Iterable[str]) -> int:
    """What a perfect judge says in the embedded world: 3 if the chunk holds a whole relevant passage."""
    text = " ".join(normalise(chunk_text).split())
    return ORACLE_RELEVANT if any(" ".join(normalise(p).split()) in text for p in passages if p.strip()) else 0


def first_relevant(judgments: Sequence[Judgment], min_grade: int = MIN_GRADE) -> int:
    """The index of the first chunk graded `min_grade` or more, or -1 (an unparseable answer is not relevant)."""
    for judgment in sorted(judgments, key=lambda j: j.chunk):
        if judgment.grade is not None and judgment.grade >= min_grade:
            return judgment.chunk
    return NO_RELEVANT_CHUNK


def chunk_requests(query: str, chunk_texts: Sequence[str], oracle_passages: Sequence[str] | None = None
                   ) -> list[tuple[str, dict]]:
    """(prompt, meta) per chunk, each chunk judged on its own with the query."""
    items = []
    for text in chunk_texts:
        meta = {"order": ORIGINAL_ORDER}
        if oracle_passages is not None:
            meta["answer"] = umbrela.answer_for(oracle_grade(text, oracle_passages))
        items.append((umbrela.prompt(query, text), meta))
    return items


def read_judgments(answers: Sequence[str]) -> list[Judgment]:
    """The judge's answers to one document's chunks, in chunk order."""
    return [Judgment(i, answer, umbrela.parse_grade(answer)) for i, answer in enumerate(answers)]
