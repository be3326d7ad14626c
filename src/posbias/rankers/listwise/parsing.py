"""A model's ranking answer turned into a permutation, whatever it wrote.

Models add words, repeat or skip identifiers and invent ones that do not exist; RankGPT's rule makes every
answer a full permutation, so a bad answer costs that window's quality, never the run.
"""

from __future__ import annotations

ASCII_DIGITS = frozenset("0123456789")


def parse_permutation(text: str, n: int) -> list[int]:
    """The 0-based order of `n` items that `text` ("[3] > [1] > [2]") gives: every run of ASCII digits is a
    1-based identifier; repeats after the first and identifiers outside 1..n are dropped; items the answer
    never named follow in their original order. (Only ASCII digits count: `str.isdigit` also accepts
    superscripts such as "²", which `int` refuses.)"""
    numbers = "".join(ch if ch in ASCII_DIGITS else " " for ch in text).split()
    order: list[int] = []
    seen: set[int] = set()
    for token in numbers:
        item = int(token) - 1
        if 0 <= item < n and item not in seen:
            seen.add(item)
            order.append(item)
    return order + [item for item in range(n) if item not in seen]
