"""Sliding windows over a candidate list, and applying one window's permutation.

RankGPT ranks at most `window` passages per call, so it slides a window from the back of the list to the
front: each window's best candidates move up into the next window, and the best of all reach the top.
"""

from __future__ import annotations

from typing import Sequence, TypeVar

from posbias.errors import InputError

T = TypeVar("T")


def _positive_int(value, name: str, minimum: int, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(f"{where}{name} must be an integer of at least {minimum}, got {value!r}")


def check_window_settings(window, step, rank_end, where: str = "") -> None:
    """Refuse settings that cannot slide (`where` prefixes the argument's name in the message, e.g. a config
    path `models.rankgpt.args.`): a window of fewer than 2 items ranks nothing, and a step longer than the
    window would skip candidates."""
    _positive_int(window, "window", 2, where)
    _positive_int(step, "step", 1, where)
    _positive_int(rank_end, "rank_end", 1, where)
    if step > window:
        raise InputError(f"{where}step must be at most the window ({window}), got {step}: "
                         f"longer steps would leave candidates unranked")


def sliding_windows(n: int, window: int = 20, step: int = 10, rank_end: int = 100) -> list[tuple[int, int]]:
    """The `(start, end)` slices, in the order they are ranked, over the first `min(n, rank_end)` of `n`
    candidates.

    As RankGPT: the first window ends at the last candidate ranked, and each next one is `step` earlier
    (for 100 candidates, window 20 and step 10: (80, 100), (70, 90), ..., (0, 20), nine windows). A window
    that would start before the first candidate is clamped to start at 0 (RankGPT's `max(start_pos,
    rank_start)`) and is the last one. RankGPT's loop stops *before* such a window, so with 25 candidates it
    ranks only (5, 25) and leaves the first five in first-stage order, and with at most `window` candidates
    it makes no call at all; here the clamped window (0, 15), or one window over all candidates, is ranked,
    so every candidate is compared. Also unlike RankGPT, which starts at `rank_end` even when fewer
    candidates exist (and sends empty or partial windows), the slide starts at the last candidate there is.
    Windows of fewer than 2 candidates are left out: there is nothing to order.
    """
    check_window_settings(window, step, rank_end)
    end = min(n, rank_end)
    start = end - window
    windows = []
    while end - max(start, 0) >= 2:
        windows.append((max(start, 0), end))
        if start <= 0:
            break
        start, end = start - step, end - step
    return windows


def apply_permutation(order: Sequence[T], start: int, end: int, permutation: Sequence[int]) -> list[T]:
    """`order` with its slice `[start, end)` rearranged: position `start + k` gets the item at
    `start + permutation[k]`; everything outside the slice stays where it was."""
    if sorted(permutation) != list(range(end - start)):
        raise ValueError(f"{list(permutation)} is not a permutation of the window's {end - start} positions")
    window = order[start:end]
    return [*order[:start], *(window[k] for k in permutation), *order[end:]]
