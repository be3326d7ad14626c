"""Position consistency of a judge (issue 32, "the judges' own bias"): the same items decided twice, once as
asked and once with the parts of the prompt in another order (a chunk's sentences reversed for UMBRELA, the model
answer placed before the evidence for the RAG judge). The content is the same both times, so a judge without
position bias decides the same.

Two numbers, because they fail differently: agreement (the share of items decided the same both times, with a
Wilson interval) falls whenever the judge changes its mind, whichever way; the test on the discordant items asks
whether the changes lean one way (one order gets the positive decision more often), which is the bias a position
estimate inherits. The items are clustered (several sampled chunks of one document judged for one query, several
verdicts on one question), so the test is `posbias.stats.paired.clustered_mcnemar`: the sign-flip test of each
cluster's net discordance, not the exact McNemar test, which would count every item as independent and give too
small a p. With no discordant item there is nothing to test: p is NaN.
"""

from __future__ import annotations

import math
from typing import Hashable, Sequence

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from posbias.stats.paired import clustered_mcnemar, json_number


def sample_indices(n: int, size: int, seed: int) -> list[int]:
    """Up to `size` of the indices 0..n-1, drawn without replacement with numpy seed `seed`, in increasing order
    (what both judges' checks re-ask)."""
    if not size or not n:
        return []
    return sorted(np.random.default_rng(seed).choice(n, size=min(size, n), replace=False).tolist())


def test_label(clusters: int) -> str:
    """How tables name the order test, with its number of clusters."""
    return f"clustered sign-flip over {clusters} cluster{'s' * (clusters != 1)}"


def order_consistency(original: Sequence[bool], reordered: Sequence[bool], clusters: Sequence[Hashable],
                      alpha: float = 0.05) -> dict:
    """Agreement of two positive/negative decisions over the same items (`original[i]` and `reordered[i]` are
    item i's, `clusters[i]` the cluster it shares with other items: its document and query, its question): n,
    agree, agreement with its Wilson interval (1 - `alpha`; NaN without items), how many items were positive in each
    order, the discordant counts, the two-sided p of the clustered test (`mcnemar_p`, `clustered_mcnemar`), the
    number of `clusters` and the `test`'s name. JSON-safe (NaN is None)."""
    first, second = pd.Series(list(original), dtype=bool), pd.Series(list(reordered), dtype=bool)
    if len(first) != len(second):
        raise ValueError(f"{len(first)} decisions in the original order against {len(second)} reordered")
    n, agree = len(first), int((first == second).sum())
    low, high = proportion_confint(agree, n, alpha=alpha, method="wilson") if n else (math.nan, math.nan)
    _, only_original, only_reordered, p, n_clusters = clustered_mcnemar(first, second, clusters)
    return {"n": n, "agree": agree, "agreement": json_number(agree / n if n else math.nan),
            "ci_low": json_number(low), "ci_high": json_number(high), "positive_original": int(first.sum()),
            "positive_reordered": int(second.sum()), "only_original": only_original, "only_reordered": only_reordered,
            "mcnemar_p": json_number(p), "clusters": n_clusters, "test": test_label(n_clusters)}
