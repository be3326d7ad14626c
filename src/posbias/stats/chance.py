"""What a ranking metric is worth when the scores say nothing: the level a position curve is read against."""

from __future__ import annotations

from typing import Mapping

import numpy as np


def expected_random(candidate_counts: Mapping[str, int]) -> tuple[float, float]:
    """MRR and mean rank of a uniformly random order of each query's candidates (averaged over queries):
    E[1/rank] = H_n / n and E[rank] = (n + 1) / 2 for n candidates."""
    counts = np.asarray(list(candidate_counts.values()), float)
    harmonic = np.array([np.sum(1.0 / np.arange(1, n + 1)) for n in counts])
    return float(np.mean(harmonic / counts)), float(np.mean((counts + 1) / 2))
