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


FAULTS = ("malformed", "out_of_range", "repeated", "missing")


def answer_faults(text: str, n: int) -> dict[str, int]:
    """What `parse_permutation` had to mend in an answer about `n` items, by kind: `malformed` (1 when no
    identifier at all could be read), `out_of_range` (identifiers outside 1..n), `repeated` (a valid identifier
    named again) and `missing` (items never named, which keep their order after the named ones)."""
    numbers = [int(token) for token in "".join(ch if ch in ASCII_DIGITS else " " for ch in text).split()]
    valid = [number for number in numbers if 1 <= number <= n]
    return {"malformed": int(not numbers), "out_of_range": len(numbers) - len(valid),
            "repeated": len(valid) - len(set(valid)), "missing": n - len(set(valid))}
