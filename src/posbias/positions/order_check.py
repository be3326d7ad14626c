"""The chunk judge's own position bias (issue 32, "the judges' own bias"): a seeded sample of the judged chunks is
judged again with its sentences in reverse order, so the content near one end of the chunk moves to the other while
the query, UMBRELA's prompt and the decoding stay the same, through the same response cache. A judge that reads the
whole chunk grades both orders alike; one that weighs the chunk's start (or end) more changes its grade, and that
bias is inherited by the first-relevant-position estimate.

Only a chunk of two or more sentences (pysbd's, as the chunker cut them) can be reordered, so the sample is drawn
from those. The set's judge keeps its verdicts from the main pass (its consistency is reported beside them); any
further judge (`positions.dense.consistency.judges`) judges the sample in both orders. A mock oracle's reversed
request carries the original chunk's answer: reordering sentences changes no fact (and a relevant passage of
several sentences would no longer be a substring of the reversed text), so the oracle is consistent by
construction.

Per judge: the share of the compared chunks with the same relevant / not relevant decision (grade >= `MIN_GRADE`)
with its Wilson interval and the test of relevant-as-written against relevant-reversed (`posbias.stats.consistency`),
clustered by document and query: the sampled chunks of one document judged for one query are not independent. A
chunk compared is one graded in at least one order; an answer without a grade counts as not relevant there, as the
position estimate reads it. A chunk graded in neither order is left out of that comparison (`no_grade`): the judge
decided nothing in either order, and counting it as agreement would give a judge that never answers in UMBRELA's
format a perfect score. Besides: the share with the identical grade among the chunks graded in both orders; the share
of all sampled chunks with the identical answer text (it shows order sensitivity even in a judge whose answers hold
no grade); and how many were unparseable in either order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import pandas as pd

from posbias.llm.types import ORIGINAL_ORDER
from posbias.positions import umbrela
from posbias.positions.chunks import sentences
from posbias.positions.judging import MIN_GRADE
from posbias.stats.consistency import order_consistency, sample_indices
from posbias.stats.paired import json_number

REVERSED = "reversed"
PAIR_COLUMNS = ("judge", "qid", "doc_id", "chunk", "sentences", "answer_original", "grade_original",
                "answer_reversed", "grade_reversed")


@dataclass(frozen=True)
class Chunk:
    """One judged chunk: where it is, what was asked (`query`, `text`) and its request's meta."""

    qid: str
    doc_id: str
    chunk: int
    query: str
    text: str
    meta: Mapping


@dataclass(frozen=True)
class Sampled:
    """A sampled chunk, its position in the judged list and its sentences reversed."""

    index: int
    chunk: Chunk
    sentences: int
    reversed_text: str


def reverse(text: str) -> tuple[int, str]:
    """The chunk's sentence count and its sentences in reverse order (the same text with fewer than two)."""
    found = sentences(text)
    return len(found), " ".join(reversed(found)) if len(found) > 1 else text


def draw(chunks: Sequence[Chunk], size: int, seed: int) -> tuple[list[Sampled], int]:
    """Up to `size` of the chunks with two or more sentences, drawn without replacement with numpy seed `seed`,
    in their judged order; and how many could be drawn (the eligible chunks)."""
    eligible = []
    for index, chunk in enumerate(chunks):
        count, text = reverse(chunk.text)
        if count > 1:
            eligible.append(Sampled(index, chunk, count, text))
    return [eligible[i] for i in sample_indices(len(eligible), size, seed)], len(eligible)


def requests(sample: Sequence[Sampled], order: str) -> list[tuple[str, dict]]:
    """(prompt, meta) of each sampled chunk as written (`ORIGINAL_ORDER`) or `REVERSED`."""
    items = []
    for each in sample:
        text = each.chunk.text if order == ORIGINAL_ORDER else each.reversed_text
        items.append((umbrela.prompt(each.chunk.query, text), {**each.chunk.meta, "order": order}))
    return items


def pairs(judge: str, sample: Sequence[Sampled], original: Sequence[str], reordered: Sequence[str]) -> pd.DataFrame:
    """One row per sampled chunk: the judge's answer and grade in each order (`PAIR_COLUMNS`)."""
    rows = [{"judge": judge, "qid": each.chunk.qid, "doc_id": each.chunk.doc_id, "chunk": each.chunk.chunk,
             "sentences": each.sentences, "answer_original": first, "grade_original": umbrela.parse_grade(first),
             "answer_reversed": second, "grade_reversed": umbrela.parse_grade(second)}
            for each, first, second in zip(sample, original, reordered, strict=True)]
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS)).astype({"grade_original": "Int64", "grade_reversed": "Int64"})


def summary(frame: pd.DataFrame, eligible: int, min_grade: int = MIN_GRADE) -> dict:
    """One judge's consistency over its pairs (`pairs`); `eligible`: the chunks the sample was drawn from. `n` and
    the decision figures are over the compared chunks (graded in at least one order), `sampled` counts them all."""
    first, second = frame["grade_original"], frame["grade_reversed"]
    graded, compared = first.notna() & second.notna(), first.notna() | second.notna()
    same_grade = int((first[graded] == second[graded]).sum())
    decisions = order_consistency(first[compared].fillna(-1).ge(min_grade).tolist(),
                                  second[compared].fillna(-1).ge(min_grade).tolist(),
                                  list(zip(frame["qid"][compared], frame["doc_id"][compared])))
    same_answer = frame["answer_original"] == frame["answer_reversed"]
    return {"eligible": eligible, "sampled": len(frame), "min_grade": min_grade, **decisions,
            "no_grade": int((~compared).sum()), "unparseable": int((~graded).sum()), "graded": int(graded.sum()),
            "same_grade": same_grade,
            "grade_agreement": json_number(same_grade / graded.sum() if graded.any() else float("nan")),
            "same_answer": int(same_answer.sum()),
            "answer_agreement": json_number(same_answer.mean() if len(frame) else float("nan"))}
