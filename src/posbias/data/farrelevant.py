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

With `target_draw="before_prefix"` step 2 comes first, as the study writes it: the
target is drawn uniformly between first_window + C_t and the cap before the prefix
is drawn, and a target the prefix already overshoots leaves no room for further
passages (K2 = 0). The default draws it after the prefix, so the budget is never
negative; the two differ slightly in the length distribution.

The builder is independent of where passages come from: the embedded
generator feeds it synthetic passages, `farrelevant_sources` MS MARCO passages.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Sequence

from posbias.errors import InputError

MAX_DRAWS = 10_000
TARGET_DRAWS = ("after_prefix", "before_prefix")


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
    target_draw: str = "after_prefix",
) -> FarRelevantDocument:
    """Build one FarRelevant document around `relevant` from the non-relevant `pool`.

    `pool` items and `relevant` only pass through `length` and `rng.choice`: a caller may pass keys
    (indices into its own texts) and join the texts itself.
    """
    if target_draw not in TARGET_DRAWS:
        raise ValueError(f"target_draw must be one of {TARGET_DRAWS}, not {target_draw!r}")
    relevant_len = length(relevant)
    if first_window + 1 + relevant_len > max_tokens:
        raise InputError(
            f"relevant passage of {relevant_len} tokens cannot start after token "
            f"{first_window} in a document of at most {max_tokens} tokens"
        )
    if target_draw == "before_prefix":
        target = rng.randint(first_window + relevant_len, max_tokens)
    prefix, prefix_len = _draw_prefix(pool, length, rng, first_window, max_tokens - relevant_len)
    if target_draw == "after_prefix":
        target = rng.randint(prefix_len + relevant_len, max_tokens)
    budget = target - prefix_len - relevant_len  # negative (no further passage) only before_prefix
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
