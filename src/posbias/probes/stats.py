"""The position sweep probe through the metric suite every position curve shares; the paired statistics of
the other probes are `posbias.stats.document_pairs`."""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from posbias.docred.probe_names import SWEEP
from posbias.stats.position_curve import curve_summary, position_curve


def sweep_sensitivity(frames: Mapping[str, pd.DataFrame], correction: str = "holm", alpha: float = 0.05,
                      seed: int = 0) -> pd.DataFrame:
    """The position sweep probe of each scorer (`frames`: scorer -> its scores, one row per pair) through the metric
    suite every position curve shares (`posbias.stats.position_curve`): the score of the query against its document
    with the evidence at k = 1..positions (`score_1`), the queries paired across positions, k = 1 the reference,
    paired t-tests as the probes use, corrected over each scorer's curve. A row per scorer; `reach` is k - 1.
    The scores are raw (dot products, BM25 scores, logits): no true zero, so no PSI or relative number (a constant
    shift of a scorer's scores would change them); the differences (best - worst, primacy, recency) and the tests
    are what compare."""
    rows = []
    for scorer, frame in frames.items():
        sweep = frame[frame["probe"] == SWEEP]
        if sweep.empty:
            continue
        values = pd.DataFrame({"unit": sweep["qid"].astype(str), "position": sweep["condition"].astype(int) - 1,
                               "value": sweep["score_1"].astype(float)})
        curve = position_curve(values, test="t", correction=correction, alpha=alpha, seed=seed, ratio_scale=False)
        rows.append({"scorer": scorer, "n_positions": len(curve), "n": int(curve["n"].min()),
                     **curve_summary(curve)})
    return pd.DataFrame(rows)
