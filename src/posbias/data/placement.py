"""Where the relevant passage goes: N slots between the non-relevant units, spread evenly in tokens.

Slot j puts the passage before unit j (slot 0: at the very start, inside any first window; slot K: at the end
of K units). The first position is always slot 0 and the last slot K; the others are the boundaries nearest to
evenly spaced token offsets, strictly increasing, so every position is a different place in the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import Callable, Sequence


@dataclass(frozen=True)
class Variant:
    position: int  # 0 .. n_positions - 1
    slot: int  # the passage comes before unit `slot`
    start: int  # its first token, as the configured tokenizer counts the text before it
    text: str
    n_tokens: int


def spread_slots(unit_lengths: Sequence[int], n_positions: int) -> list[int]:
    """`n_positions` strictly increasing slots from 0 to len(unit_lengths), each nearest to its evenly spaced
    token target; ValueError when there are fewer boundaries than positions."""
    n_units = len(unit_lengths)
    if n_positions < 2:
        raise ValueError(f"a sweep needs at least 2 positions, got {n_positions}")
    if n_units + 1 < n_positions:
        raise ValueError(f"{n_units} units have {n_units + 1} boundaries, fewer than {n_positions} positions")
    offsets = [0, *accumulate(unit_lengths)]
    total = offsets[-1]
    slots = [0]
    for i in range(1, n_positions - 1):
        target = total * i / (n_positions - 1)
        # leave one boundary for each position still to come
        allowed = range(slots[-1] + 1, n_units - (n_positions - 1 - i) + 1)
        slots.append(min(allowed, key=lambda slot: (abs(offsets[slot] - target), slot)))
    return slots + [n_units]


def place(units: Sequence[str], passage: str, slots: Sequence[int], length: Callable[[str], int]) -> list[Variant]:
    """The document with `passage` at each slot: the units joined by single spaces, as FarRelevant joins its
    passages. The start is counted on the text before the passage, which for a tokenizer that splits at
    whitespace first (WordPiece, whitespace) is the index of the passage's first token in the whole document."""
    variants = []
    for position, slot in enumerate(slots):
        before = " ".join(units[:slot])
        text = " ".join([*units[:slot], passage, *units[slot:]])
        variants.append(Variant(position, slot, length(before) if before else 0, text, length(text)))
    return variants
