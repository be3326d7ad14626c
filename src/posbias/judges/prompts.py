"""The pairwise question a live judge is asked, and how its verdict is read from its answer.

The prompt is ours: the question, the two answers in the order being tested, labelled A and B, and the three
verdicts a pairwise judge of MT-Bench's kind gives ([[A]], [[B]], [[C]] for a tie). The verdict is the first
bracketed tag in the answer, as Shi et al. read theirs; a small model that answers with a bare letter is read by
that letter (the first word of its answer, A, B or C alone); anything else is unread.
"""

from __future__ import annotations

import re

LETTERS = {"A": "first", "B": "second", "C": "tie"}
_TAG = re.compile(r"\[\[([ABC])\]\]")
_BARE = re.compile(r"^\W*([ABC])\b")

TEMPLATE = (
    "You are judging two answers to the same question. Decide which answer is more correct and more useful; "
    "the order in which they are shown does not matter.\n\n"
    "Question: {question}\n\n"
    "Answer A: {first}\n\n"
    "Answer B: {second}\n\n"
    "Reply with [[A]] if answer A is better, [[B]] if answer B is better, or [[C]] if they are equally good.\n"
    "Verdict:")


def pairwise_prompt(question: str, first: str, second: str) -> str:
    return TEMPLATE.format(question=question, first=first, second=second)


def read_verdict(answer: str) -> str | None:
    """first, second or tie from the judge's answer; None when it gives no verdict."""
    found = _TAG.search(answer) or _BARE.search(answer)
    return LETTERS[found.group(1)] if found else None
