"""A curve on a continuous axis (a grid's depths, denser near both ends): its positions weighted by the span of the
axis each stands for (`coordinate_weights`, `weighted_summary`), on curves whose weighted means are known."""

from __future__ import annotations

import pandas as pd
import pytest

from posbias.stats.position_curve import coordinate_weights, curve_summary, position_curve

GRID_DEPTHS = [0, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1]  # the grid battery's default depths


def curve_of(means: list[float]) -> pd.DataFrame:
    """A curve whose every unit scores its position's mean give or take 0.125 (the offsets sum to zero)."""
    offsets = [0.125, -0.125, 0.25, -0.25]
    return position_curve(pd.DataFrame([{"unit": f"q{u}", "position": p, "value": m + o}
                                        for p, m in enumerate(means) for u, o in enumerate(offsets)]),
                          n_resamples=0)


def test_the_grid_s_depth_weights_sum_to_one_and_give_each_depth_its_span():
    weights = coordinate_weights(GRID_DEPTHS)
    assert weights.sum() == pytest.approx(1.0)
    # each depth: half the gap to either neighbour (0.05 / 2 at 0; (0.05 + 0.05) / 2 at 0.05; (0.25 + 0.25) / 2 at 0.5)
    assert weights.tolist() == pytest.approx([0.025, 0.05, 0.1, 0.2, 0.25, 0.2, 0.1, 0.05, 0.025])
    assert coordinate_weights([0, 0.5, 1]).tolist() == pytest.approx([0.25, 0.5, 0.25])  # evenly spaced: the ends half
    assert coordinate_weights([0.3, 0.3]).tolist() == [0.5, 0.5]  # no span: alike
    with pytest.raises(ValueError, match="axis order"):
        coordinate_weights([0, 1, 0.5])


def test_a_toy_curve_s_depth_weighted_mean_is_the_hand_computed_one():
    """A dip to 0.2 at depth 0.5 between 1s: the plain mean over the 9 positions is (8 + 0.2) / 9 = 0.911, the
    depth-weighted one 1 - 0.25 * 0.8 = 0.8, since depth 0.5 stands for a quarter of the document."""
    means = [1.0, 1.0, 1.0, 1.0, 0.2, 1.0, 1.0, 1.0, 1.0]
    curve = curve_of(means)
    summary = curve_summary(curve, coordinates=pd.Series(GRID_DEPTHS, index=range(9)))
    assert summary["mean_unweighted"] == pytest.approx(8.2 / 9)
    assert summary["mean_weighted"] == pytest.approx(0.8)
    # the middle primacy and recency are taken against: the interior depths 0.05..0.95 by the trapezoid rule,
    # (0.9 * 1 - 0.25 * 0.8) / 0.9: the dip stands for its span, 0.25 of the interior's 0.9
    assert summary["middle"] == pytest.approx((0.9 - 0.25 * 0.8) / 0.9)
    assert summary["primacy"] == pytest.approx(1.0 - summary["middle"])
    assert summary["recency"] == pytest.approx(summary["primacy"])


def test_a_curve_without_an_axis_keeps_its_summary_as_it_was():
    """Only a curve on an axis gains the weighted means (the sweep's, the probes', Lost in the Middle's tables keep
    their columns); evenly spaced depths weigh the ends half."""
    curve = curve_of([1.0, 0.5, 0.0])
    plain = curve_summary(curve)
    assert "mean_weighted" not in plain and "middle" not in plain
    even = curve_summary(curve, coordinates=pd.Series([0, 0.5, 1], index=range(3)))
    assert even["mean_weighted"] == pytest.approx(0.25 * 1 + 0.5 * 0.5 + 0.25 * 0)
    assert even["mean_unweighted"] == pytest.approx(0.5)
    assert {k: v for k, v in even.items() if k in plain} == pytest.approx(plain, nan_ok=True)
