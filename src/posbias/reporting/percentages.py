"""Whole percentages that add up to exactly 100, by the largest-remainder (Hamilton) method.

Rounding each share on its own can make a row of shares add up to 99% or 101%. Here every
share is first rounded down, then the points still missing go to the shares that lost the
most in rounding down; among equal losses, to the earlier share.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def whole_percentages(counts: Sequence[int]) -> list[int]:
    """Each count's share of their total, in whole percent, the shares summing to 100."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total <= 0 or (counts < 0).any():
        raise ValueError(f"counts must be non-negative with a positive total, got {counts.tolist()}")
    # Integer arithmetic: floor(100 c / total) and its remainder, exactly.
    floors, remainders = np.divmod(100 * counts, total)
    missing = 100 - int(floors.sum())
    order = np.argsort(-remainders, kind="stable")  # stable: ties go to the earlier share
    floors[order[:missing]] += 1
    return floors.tolist()
