"""Character offsets to token offsets: the tokens (of the study's tokenizer, bert-base-uncased) of the
whitespace words before the offset. A word is before it when it ends at or before it, so an offset inside a
word maps to that word's first token."""

from __future__ import annotations

import bisect
import re
from typing import Callable

_WORD = re.compile(r"\S+")


class TokenOffsets:
    """One document's word ends and cumulative token counts, so each lookup is a binary search."""

    def __init__(self, text: str, count_tokens: Callable[[str], int]):
        words = [(m.end(), m.group()) for m in _WORD.finditer(text)]
        self.ends = [end for end, _ in words]
        self.cumulative = [0]
        for _, word in words:
            self.cumulative.append(self.cumulative[-1] + count_tokens(word))

    @property
    def total(self) -> int:
        return self.cumulative[-1]

    def at(self, char_offset: int) -> int:
        return self.cumulative[bisect.bisect_right(self.ends, char_offset)]


def token_offset(text: str, char_offset: int, count_tokens: Callable[[str], int]) -> int:
    return TokenOffsets(text, count_tokens).at(char_offset)
