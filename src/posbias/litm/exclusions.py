"""Which questions a model's context cannot hold, decided once per question over every position (spec §6.12).

The authors' Llama-2 script skips an example whose prompt is too long in each position's file on its own, so
the retained questions can differ between positions (token merges at the gold document's boundaries vary) and
the curve is no longer paired (quirk 12). Fixed: a question is excluded at every position of a (model, size) if
its longest prompt over the positions does not fit, so all positions share one question set.

`count_tokens` counts what the model receives (apply its wrapper first if it has one); `limit` is the most
prompt tokens it may take: its context, less `max_new_tokens` if the answer must fit as well.
"""

from __future__ import annotations

import json
import os
from typing import Callable, Hashable, Mapping, Sequence

from posbias.io import atomic_write


def longest_prompts(prompts: Mapping[Hashable, Sequence[tuple[str, str]]],
                    count_tokens: Callable[[str], int]) -> dict[str, int]:
    """`{example id: tokens of its longest prompt}` over positions given as `{position: [(id, prompt), ...]}`."""
    longest: dict[str, int] = {}
    for examples in prompts.values():
        for example_id, prompt in examples:
            longest[example_id] = max(longest.get(example_id, 0), count_tokens(prompt))
    return longest


def excluded_examples(prompts: Mapping[Hashable, Sequence[tuple[str, str]]], count_tokens: Callable[[str], int],
                      limit: int | None) -> dict[str, int]:
    """`{example id: longest prompt}` for the examples whose longest prompt exceeds `limit` (None: no limit)."""
    if limit is None:
        return {}
    return {example_id: n for example_id, n in longest_prompts(prompts, count_tokens).items() if n > limit}


def write_exclusions(path: str | os.PathLike, excluded: Mapping[str, int], limit: int | None,
                     n_examples: int) -> None:
    """Record the excluded examples (JSON: limit, how many examples there were, and each excluded id with the
    tokens of its longest prompt), atomically."""
    with atomic_write(path) as out:
        json.dump({"limit": limit, "n_examples": n_examples, "n_excluded": len(excluded),
                   "excluded": dict(sorted(excluded.items()))}, out, indent=1)
        out.write("\n")
