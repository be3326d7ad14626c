"""The position sweep probe through the shared metric suite (`posbias.probes.stats`)."""

import numpy as np
import pytest


def test_the_position_sweep_through_the_shared_metric_suite():
    """A scorer whose score falls from 1.0 at k = 1 to 0.5 at k = 2 and 0.6 at k = 3 for every query (plus a
    per-query offset, so the t-tests have variance) has exact suite values. Its scores are raw, with no true zero:
    no PSI or relative drop, and the same suite for the scores shifted by a constant (negative or not)."""
    import pandas as pd

    from posbias.probes.stats import sweep_sensitivity

    means = {1: 1.0, 2: 0.5, 3: 0.6}
    offsets = [-0.02, 0.0, 0.01, 0.03, -0.01, 0.02]
    rows = [{"probe": "position_sweep", "qid": f"q{i}", "condition": str(k), "score_1": m + o + 0.001 * k * i,
             "score_2": 1.0 + o} for i, o in enumerate(offsets) for k, m in means.items()]
    rows.append({"probe": "position_first_last", "qid": "q0", "condition": "", "score_1": 5.0, "score_2": 1.0})
    frame = pd.DataFrame(rows)
    table = sweep_sensitivity({"a": frame, "shifted": frame.assign(score_1=frame["score_1"] + 3),
                               "negative": frame.assign(score_1=frame["score_1"] - 2)}).set_index("scorer")
    a = table.loc["a"]
    k_means = [np.mean([means[k] + o + 0.001 * k * i for i, o in enumerate(offsets)]) for k in (1, 2, 3)]
    assert a["reference_mean"] == pytest.approx(k_means[0])
    assert a["best_worst_gap"] == pytest.approx(k_means[0] - k_means[1])
    assert a["primacy"] == pytest.approx(k_means[0] - k_means[1]) and a["recency"] == pytest.approx(
        k_means[2] - k_means[1])
    assert a["significant_drops"] == 2 and a["reach"] == 0 and a["n"] == 6 and a["n_positions"] == 3
    for name in ("a", "shifted", "negative"):
        row = table.loc[name]
        assert all(np.isnan(row[key]) for key in ("psi", "worst_drop", "best_worst_gap_relative", "primacy_relative"))
        for key in ("best_worst_gap", "primacy", "recency"):
            assert row[key] == pytest.approx(a[key])
        assert row["significant_drops"] == a["significant_drops"] and row["reach"] == a["reach"]
