"""DPR's answer matcher, which sets `hasanswer` on retrieved passages (spec §2.1, §2.2): does any answer occur
in a text as a sequence of whole tokens?

Texts and answers are NFD-normalised, split by DPR's SimpleTokenizer rule (a run of letters, digits and
combining marks, or any single character that is neither a separator nor a control character) and lower-cased.
Punctuation marks are tokens of their own, so "14" does not match "1400" and "*" matches only a text with a "*"
(unlike the QA metric's substring test). As in DPR, an answer with no tokens at all (empty or blank) matches
every text.
"""

from __future__ import annotations

import unicodedata
from typing import Iterable

import regex

_TOKEN = regex.compile(r"[\p{L}\p{N}\p{M}]+|[^\p{Z}\p{C}]", flags=regex.IGNORECASE | regex.UNICODE | regex.MULTILINE)


def tokens(text: str) -> list[str]:
    """DPR's uncased tokens of `text` after NFD normalisation."""
    return [match.group().lower() for match in _TOKEN.finditer(unicodedata.normalize("NFD", text))]


def has_answer(text: str, answers: Iterable[str]) -> bool:
    """True if the tokens of any answer occur consecutively in the tokens of `text`."""
    words = tokens(text)
    for answer in answers:
        needle = tokens(answer)
        width = len(needle)
        if any(words[i:i + width] == needle for i in range(len(words) - width + 1)):
            return True
    return False
