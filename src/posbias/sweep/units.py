"""A FarRelevant document split into its relevant passage and the non-relevant text around it.

FarRelevant documents are passages joined by single spaces, so the relevant passage is found as a whole-word
occurrence of its text. Where it occurs more than once, the occurrence whose token offset is the one the
builder recorded (positions file) is taken. The non-relevant text is cut into sentence units: placing the
relevant passage between units never splits a sentence (a synthetic passage is one sentence, an MS MARCO
passage a few).
"""

from __future__ import annotations

import re
from typing import Callable

from posbias.errors import InputError

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


def sentence_units(text: str) -> list[str]:
    """The sentences of `text` (split after . ! or ? followed by whitespace), stripped; none for blank text."""
    return [unit.strip() for unit in _SENTENCE_END.split(text.strip()) if unit.strip()]


def occurrences(text: str, passage: str) -> list[int]:
    """Character offsets where `passage` occurs in `text` as whole words (bounded by whitespace or the ends)."""
    found, start = [], text.find(passage)
    while start >= 0:
        end = start + len(passage)
        if (start == 0 or text[start - 1].isspace()) and (end == len(text) or text[end].isspace()):
            found.append(start)
        start = text.find(passage, start + 1)
    return found


def split_document(text: str, passage: str, start: int | None, length: Callable[[str], int],
                   where: str) -> list[str]:
    """The non-relevant sentence units of a document, in order, without the relevant `passage`.

    `start` is the passage's recorded start token (None: take the first occurrence); `where` names the
    document in errors."""
    offsets = occurrences(text, passage)
    if not offsets:
        raise InputError(f"{where}: its relevant passage {passage[:60]!r} is not in the document")
    if start is None or len(offsets) == 1:
        chosen = offsets[0]
    else:  # the recorded token offset tells repeated occurrences apart
        chosen = min(offsets, key=lambda offset: abs(length(text[:offset].rstrip()) - start))
    return sentence_units(text[:chosen]) + sentence_units(text[chosen + len(passage):])
