"""posbias.stats.curve_comparison: two curves of the same units compared unit by unit, against scipy and against
the single-curve suite's own numbers."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from posbias.errors import InputError
from posbias.stats.corrections import adjust
from posbias.stats.curve_comparison import (paired_matrices, position_differences, reach_difference, shape_test,
                                            summary_differences)
from posbias.stats.position_curve import curve_summary, position_curve

POSITIONS = [0, 1, 2, 3, 4]


def values(matrix: np.ndarray) -> pd.DataFrame:
    """A [units x positions] matrix as the (unit, position, value) table a battery writes, rows shuffled."""
    frame = pd.DataFrame([{"unit": f"u{u}", "position": POSITIONS[p], "value": float(matrix[u, p])}
                          for u in range(matrix.shape[0]) for p in range(matrix.shape[1])])
    return frame.sample(frac=1, random_state=0).reset_index(drop=True)


def u_shaped(n_units: int, depth: float, seed: int) -> np.ndarray:
    """Reciprocal-rank-like values in [0, 1]: a U over the positions `depth` deep, noise per unit and position."""
    rng = np.random.default_rng(seed)
    shape = 1 - depth * np.array([0.0, 0.6, 1.0, 0.6, 0.0])
    return np.clip(shape + rng.normal(0, 0.1, (n_units, len(POSITIONS))), 0, 1)


def test_each_positions_difference_is_the_paired_t_test_of_b_against_a_holm_corrected():
    a, b = u_shaped(30, 0.6, 1), u_shaped(30, 0.1, 2)
    table = position_differences(values(a), values(b), n_resamples=500)
    p = [stats.ttest_rel(b[:, i], a[:, i]).pvalue for i in range(len(POSITIONS))]
    assert table["position"].tolist() == POSITIONS and (table["n"] == 30).all()
    assert table["difference"].to_numpy() == pytest.approx((b - a).mean(axis=0))
    assert table["mean_a"].to_numpy() == pytest.approx(a.mean(axis=0))
    assert table["p"].to_numpy() == pytest.approx(p)
    assert table["p_adjusted"].to_numpy() == pytest.approx(adjust(p, "holm"))
    assert ((table["ci_low"] <= table["difference"]) & (table["difference"] <= table["ci_high"])).all()
    middle = table.set_index("position").loc[2]
    assert middle["difference"] > 0.3 and middle["p_adjusted"] < 0.001  # B's flatter U lifts the middle


def test_zero_one_values_take_the_exact_mcnemar_test():
    rng = np.random.default_rng(3)
    a = (rng.random((40, 5)) < 0.5).astype(float)
    b = a.copy()
    b[:12, 2] = 1.0 - a[:12, 2]  # twelve discordant answers at one position
    table = position_differences(values(a), values(b), test="mcnemar", n_resamples=200).set_index("position")
    changed = b[:, 2] != a[:, 2]
    up, down = int((b[changed, 2] > a[changed, 2]).sum()), int((b[changed, 2] < a[changed, 2]).sum())
    assert table.loc[2, "p"] == pytest.approx(stats.binomtest(up, up + down).pvalue)
    assert table.drop(index=2)["p"].isna().all()  # identical elsewhere: no test


def test_units_measured_apart_are_refused_with_one_line():
    a, b = values(u_shaped(6, 0.5, 1)), values(u_shaped(6, 0.5, 2))
    b.loc[b["unit"] == "u5", "unit"] = "u9"
    with pytest.raises(InputError, match=r"not measured on the same units and positions: 5 \(unit, position\) pairs "
                                         r"only in A .* 5 only in B"):
        position_differences(a, b)
    with pytest.raises(InputError, match="same units"):
        shape_test(a, b.iloc[1:])


def test_the_summary_differences_are_the_single_curve_suites_numbers_with_a_paired_interval():
    a, b = u_shaped(40, 0.6, 4), u_shaped(40, 0.2, 5)
    chance = 0.2
    table = summary_differences(values(a), values(b), chance=chance, n_resamples=1000, seed=7).set_index("number")
    for side, matrix in (("a", a), ("b", b)):
        summary = curve_summary(position_curve(values(matrix), n_resamples=100), chance=chance)
        assert table.loc["psi", side] == pytest.approx(summary["psi"])
        assert table.loc["psi_above_chance", side] == pytest.approx(summary["psi_above_chance"])
        assert table.loc["best_worst_gap", side] == pytest.approx(summary["best_worst_gap"])
    psi = table.loc["psi"]
    assert psi["difference"] == pytest.approx(psi["b"] - psi["a"]) and psi["ci_high"] < 0  # B is flatter
    assert psi["ci_low"] <= psi["difference"] <= psi["ci_high"]
    again = summary_differences(values(a), values(b), chance=chance, n_resamples=1000, seed=7)
    assert again.equals(table.reset_index())  # the seed fixes the resamples


def test_raw_scores_have_no_psi_to_compare():
    a, b = u_shaped(10, 0.5, 1) - 0.5, u_shaped(10, 0.5, 2) - 0.5
    table = summary_differences(values(a), values(b), ratio_scale=False, n_resamples=50).set_index("number")
    assert np.isnan(table.loc["psi", "difference"]) and np.isnan(table.loc["psi_above_chance", "ci_low"])
    assert not np.isnan(table.loc["best_worst_gap", "difference"])


def test_a_constant_shift_has_the_same_shape_and_a_flattened_u_has_another():
    a = u_shaped(30, 0.6, 6)
    assert np.isnan(shape_test(values(a), values(a + 0.1))["p"])  # every unit shifted alike: nothing to test
    noisy_shift = a + 0.1 + np.random.default_rng(8).normal(0, 0.05, a.shape)
    flattened = u_shaped(30, 0.0, 9)
    shifted, flat = shape_test(values(a), values(noisy_shift)), shape_test(values(a), values(flattened))
    assert shifted["p"] > 0.01 and flat["p"] < 1e-6 and flat["positions"] == 5 and flat["units"] == 30
    assert flat["statistic"] == pytest.approx(stats.friedmanchisquare(*(flattened - a).T).statistic)


def test_the_matrices_line_units_and_positions_up_whatever_the_rows_order():
    a = u_shaped(4, 0.5, 1)
    x, y, units, positions = paired_matrices(values(a), values(a * 2).iloc[::-1])
    assert units == ["u0", "u1", "u2", "u3"] and positions == POSITIONS
    assert np.array_equal(y, 2 * x) and np.allclose(x, a)


def test_the_reach_difference_counts_from_one_and_its_interval_holds_the_retested_reaches():
    """A falls from the second position on, B only at the last: B reads three positions further. Identical curves
    give a difference of 0 in every resample."""
    rng = np.random.default_rng(3)
    noise = rng.normal(0, 0.05, (24, len(POSITIONS)))
    a = np.clip(np.array([0.9, 0.4, 0.4, 0.4, 0.4]) + noise, 0, 1)
    b = np.clip(np.array([0.9, 0.9, 0.9, 0.9, 0.4]) + noise, 0, 1)
    reach = {name: curve_summary(position_curve(values(m), test="t"))["reach"] for name, m in (("a", a), ("b", b))}
    assert reach == {"a": 0, "b": 3}
    row = reach_difference(values(a), values(b), reach["a"], reach["b"], test="t", n_resamples=50)
    assert (row["a"], row["b"], row["difference"]) == (1.0, 4.0, 3.0)
    assert row["ci_low"] <= 3 <= row["ci_high"] and row["ci_high"] - row["ci_low"] <= 1
    same = reach_difference(values(a), values(a), reach["a"], reach["a"], test="t", n_resamples=20)
    assert (same["difference"], same["ci_low"], same["ci_high"]) == (0.0, 0.0, 0.0)
