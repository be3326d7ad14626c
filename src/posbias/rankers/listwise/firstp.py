"""FirstP for a listwise ranker: a document cut to its longest prefix of whole sentences within a token budget.

The authors cut each document this way before RankGPT saw it (`chunk_utils.extract_sentences_up_to_the_limit`,
512 `bert-base-uncased` tokens, spaCy sentences); posbias finds sentences with pysbd, which needs no model
download.
"""

from __future__ import annotations

import functools
from typing import Callable

CHARS_PER_TOKEN_CUT = 10  # the authors' pre-cut: no 512-token prefix is longer than 5120 characters in practice


@functools.lru_cache(maxsize=1)
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def first_sentences_within(text: str, limit: int, count_tokens: Callable[[str], int]) -> str:
    """The longest prefix of whole sentences of `text` that `count_tokens` (no special tokens) counts at most
    `limit` tokens, stripped.

    For speed the text is first cut at `10 * limit` characters, as the authors did; if that cut fell inside
    the text, the last sentence found may be partial, so it never counts as whole. When even the first
    sentence is over the limit, the result is its longest prefix of whitespace words within the limit (the
    document would otherwise be empty); words are joined by single spaces there. A first word alone over the
    limit leaves the empty string.
    """
    cut = CHARS_PER_TOKEN_CUT * limit
    sentences = _segmenter().segment(text[:cut])
    if len(text) > cut and len(sentences) > 1:
        sentences = sentences[:-1]
    best = ""
    for k in range(1, len(sentences) + 1):
        prefix = "".join(sentences[:k]).strip()
        if count_tokens(prefix) > limit:
            return best if k > 1 else _first_words_within(sentences[0], limit, count_tokens)
        best = prefix
    return best


def _first_words_within(sentence: str, limit: int, count_tokens: Callable[[str], int]) -> str:
    """The longest prefix of the sentence's words counted at most `limit` tokens (binary search: token counts
    grow with the number of words)."""
    words = sentence.split()
    low, high = 0, len(words)  # words[:low] fits; words[:high + 1] does not (or high is every word)
    while low < high:
        middle = (low + high + 1) // 2
        if count_tokens(" ".join(words[:middle])) <= limit:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low])
