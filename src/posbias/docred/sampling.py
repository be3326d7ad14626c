"""The study's row selection, written out (spec §1.6): its pandas calls define which pairs a seed draws.

- `sample(rows, n, seed)` is `DataFrame.sample(n, random_state=seed)`: numpy's legacy `RandomState(seed)` draws
  `n` row positions without replacement (`choice(N, n, replace=False)`, the first `n` of a permutation), in draw
  order. The same seed over the same candidate rows therefore gives the authors' pairs.
- `last_per_group(rows, key, k)` is `groupby(key).tail(k)`: the last `k` rows of each group, in row order.
- `first_per_group(rows, key)` is `drop_duplicates(key)`: the first row of each group.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Sequence, TypeVar

import numpy as np

from posbias.errors import InputError

Row = TypeVar("Row")


def sample(rows: Sequence[Row], n: int, seed: int, what: str = "probes.n") -> list[Row]:
    """`n` rows drawn without replacement by `RandomState(seed)`, in draw order. Too few rows is an InputError
    naming `what` (the config key that asks for `n`)."""
    if n > len(rows):
        raise InputError(f"{what}: {n} pairs asked for, but only {len(rows)} candidates pass the probe's filter")
    positions = np.random.RandomState(seed).choice(len(rows), size=n, replace=False)
    return [rows[int(i)] for i in positions]


def shuffle(rows: Sequence[Row], seed: int) -> list[Row]:
    """`DataFrame.sample(frac=1, random_state=seed)`: every row, in a seeded order."""
    return sample(rows, len(rows), seed)


def last_per_group(rows: Sequence[Row], key: Callable[[Row], object], k: int) -> list[Row]:
    """The last `k` rows of each group (`groupby(key).tail(k)`), kept in row order."""
    remaining = Counter(key(row) for row in rows)
    kept = []
    for row in rows:
        group = key(row)
        if remaining[group] <= k:
            kept.append(row)
        remaining[group] -= 1
    return kept


def first_per_group(rows: Sequence[Row], key: Callable[[Row], object]) -> list[Row]:
    """The first row of each group (`drop_duplicates(key)`), in row order."""
    seen, kept = set(), []
    for row in rows:
        group = key(row)
        if group not in seen:
            seen.add(group)
            kept.append(row)
    return kept
