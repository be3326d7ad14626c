"""The FarRelevant document builder (appendix B.2 of the long-document study).

Each document holds exactly one relevant passage, which starts after the first
window of `first_window` tokens, and the whole document is at most
`max_tokens` tokens long. Our reading of the algorithm, with C_t the length of
the relevant passage:

1. sample non-relevant passages until their total length first exceeds the
   first window (a passage that would leave no room for the relevant one is
   rejected and redrawn): these K1 passages are the prefix;
2. pick a target document length uniformly between prefix + C_t and the cap;
3. sample further non-relevant passages while they fit into the remaining
   budget (target - prefix - C_t); the first one that does not fit is discarded;
4. shuffle the relevant passage in among those K2 passages and append them to
   the prefix.

The builder is independent of where passages come from: the embedded
generator feeds it synthetic passages, a later source feeds MS MARCO Passages.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Sequence

from posbias.errors import InputError

MAX_DRAWS = 10_000


@dataclass(frozen=True)
class FarRelevantDocument:
    passages: tuple[str, ...]
    relevant_index: int  # position of the relevant passage in `passages`
    relevant_start: int  # token offset where the relevant passage starts
    n_tokens: int

    @property
    def text(self) -> str:
        return " ".join(self.passages)


def build_document(
    relevant: str,
    pool: Sequence[str],
    length: Callable[[str], int],
    rng: random.Random,
    first_window: int,
    max_tokens: int,
) -> FarRelevantDocument:
    """Build one FarRelevant document around `relevant` from the non-relevant `pool`."""
    relevant_len = length(relevant)
    if first_window + 1 + relevant_len > max_tokens:
        raise InputError(
            f"relevant passage of {relevant_len} tokens cannot start after token "
            f"{first_window} in a document of at most {max_tokens} tokens"
        )
    prefix, prefix_len = _draw_prefix(pool, length, rng, first_window, max_tokens - relevant_len)
    target = rng.randint(prefix_len + relevant_len, max_tokens)
    budget = target - prefix_len - relevant_len
    suffix, suffix_lens = [], []
    for _ in range(MAX_DRAWS):
        passage = rng.choice(pool)
        n = length(passage)
        if sum(suffix_lens) + n > budget:
            break  # the passage that overflows the budget is discarded
        suffix.append(passage)
        suffix_lens.append(n)
    insert_at = rng.randint(0, len(suffix))
    passages = prefix + suffix[:insert_at] + [relevant] + suffix[insert_at:]
    start = prefix_len + sum(suffix_lens[:insert_at])
    total = prefix_len + relevant_len + sum(suffix_lens)
    return FarRelevantDocument(tuple(passages), len(prefix) + insert_at, start, total)


def _draw_prefix(pool, length, rng, first_window, room):
    """Draw passages until their total length first exceeds `first_window`."""
    prefix, total = [], 0
    for _ in range(MAX_DRAWS):
        if total > first_window:
            return prefix, total
        passage = rng.choice(pool)
        n = length(passage)
        if total + n > room:
            continue  # rejection: no room left for the relevant passage
        prefix.append(passage)
        total += n
    raise InputError(
        f"could not fill the first {first_window} tokens from the passage pool "
        f"within {MAX_DRAWS} draws; the pool's passages are too long for a "
        f"{room}-token budget"
    )
