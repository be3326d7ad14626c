import numpy as np
import pandas as pd
import pytest
from scipy import stats

from posbias.stats.paired import paired_t_test


def test_matches_scipy_and_reports_relative_gain():
    rng = np.random.default_rng(0)
    qids = [f"q{i}" for i in range(40)]
    b = pd.Series(rng.uniform(0, 1, 40), index=qids)
    a = pd.Series(np.clip(b.to_numpy() + rng.normal(0.05, 0.1, 40), 0, 1), index=qids)
    shuffled = a.sample(frac=1.0, random_state=1)  # alignment is by query id, not by order
    result = paired_t_test(shuffled, b)
    expected = stats.ttest_rel(a.to_numpy(), b.to_numpy())
    assert result.t_statistic == pytest.approx(expected.statistic)
    assert result.p_value == pytest.approx(expected.pvalue)
    assert result.relative_gain == pytest.approx(a.mean() / b.mean() - 1)
    assert result.n_queries == 40


def test_identical_systems_and_mismatched_queries():
    s = pd.Series([0.1, 0.5], index=["q1", "q2"])
    assert paired_t_test(s, s).p_value == 1.0
    with pytest.raises(ValueError, match="different queries"):
        paired_t_test(s, pd.Series([0.1], index=["q1"]))
