"""The sweep's curves and the position breakdown against scipy and statsmodels, computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from posbias.errors import InputError
from posbias.stats.unpaired import mean_interval, welch_t_test
from posbias.sweep.stats import bins_from_edges, position_breakdown, sweep_curves, with_ranks

STATISTICS = {"test": "t", "correction": "holm", "permutations": 999, "seed": 0}


def per_seed_frame(ranks: dict) -> pd.DataFrame:
    """Per-seed RR rows from ranks[(system, seed)][qid]."""
    rows = [{"system": s, "seed": seed, "queryset": "sweep", "metric": "RR", "qid": q, "value": 1.0 / r}
            for (s, seed), per_query in ranks.items() for q, r in per_query.items()]
    return pd.DataFrame(rows)


def positions_frame(bases, n_positions, step=10):
    rows = [{"qid": f"{b}@p{p}", "start": p * step + i, "slot": p, "position": p, "base": b, "doc_tokens": 72}
            for i, b in enumerate(bases) for p in range(n_positions)]
    return pd.DataFrame(rows)


@pytest.fixture
def sweep():
    rng = np.random.default_rng(0)
    bases, n_positions = [f"b{i}" for i in range(8)], 3
    ranks = {}
    for seed in (1, 2):
        # the model finds the passage early (ranks 1-2) and loses it later (ranks 3-10)
        ranks[("m", seed)] = {f"{b}@p{p}": int(rng.integers(1, 3) if p == 0 else rng.integers(3, 11))
                              for b in bases for p in range(n_positions)}
    return per_seed_frame(ranks), positions_frame(bases, n_positions), ranks, bases


def test_curves_match_scipy(sweep):
    frame, positions, ranks, bases = sweep
    curves = sweep_curves(with_ranks(frame, "RR"), positions, {"m": "Model"}, "RR", STATISTICS, 0.05)
    rr = {p: np.array([np.mean([1 / ranks[("m", s)][f"{b}@p{p}"] for s in (1, 2)]) for b in bases]) for p in range(3)}
    rank = {p: np.array([np.mean([ranks[("m", s)][f"{b}@p{p}"] for s in (1, 2)]) for b in bases]) for p in range(3)}
    raw = [stats.ttest_rel(rr[p], rr[0]).pvalue for p in (1, 2)]
    adjusted = multipletests(raw, method="holm")[1]
    for p in range(3):
        row = curves[curves["position"] == p].iloc[0]
        low, high = stats.t.interval(0.95, len(bases) - 1, loc=rr[p].mean(), scale=stats.sem(rr[p]))
        assert row["mrr"] == pytest.approx(rr[p].mean()) and row["mean_rank"] == pytest.approx(rank[p].mean())
        assert (row["mrr_ci_low"], row["mrr_ci_high"]) == pytest.approx((low, high))
        assert row["rank_ci_low"] < row["mean_rank"] < row["rank_ci_high"]
        assert row["n_queries"] == len(bases) and row["mean_start"] == pytest.approx(p * 10 + 3.5)
        if p == 0:
            assert math.isnan(row["p"]) and not row["significant"]
        else:
            assert row["p"] == pytest.approx(raw[p - 1]) and row["p_adjusted"] == pytest.approx(adjusted[p - 1])
            assert row["significant"] == (adjusted[p - 1] < 0.05)


def test_a_missing_variant_is_an_error(sweep):
    frame, positions, _, _ = sweep
    with pytest.raises(InputError, match="has RR 0"):
        with_ranks(frame.assign(value=frame["value"].where(frame["qid"] != "b0@p1", 0.0)), "RR")
    with pytest.raises(InputError, match="no sweep values for 1 queries"):
        sweep_curves(with_ranks(frame[frame["qid"] != "b3@p2"], "RR"), positions, {"m": "M"}, "RR", STATISTICS, 0.05)


def test_welch_and_intervals_match_scipy():
    x, y = [0.1, 0.5, 1.0, 0.2], [1.0, 1.0, 0.5, 0.33, 1.0]
    result = stats.ttest_ind(x, y, equal_var=False)
    assert welch_t_test(x, y) == pytest.approx((result.statistic, result.pvalue))
    assert all(math.isnan(v) for v in welch_t_test([1.0], y))  # one value: no variance to estimate
    assert welch_t_test([1.0, 1.0], [1.0, 1.0, 1.0]) == (0.0, 1.0)
    assert mean_interval([0.5, 0.5]) == (0.5, 0.5, 0.5)


def test_bins():
    bins = bins_from_edges([24, 48])
    assert [b.label for b in bins] == ["[0, 24)", "[24, 48)", "≥ 48"]
    assert [b.holds(23) for b in bins] == [True, False, False] and bins[2].holds(10_000)
    for edges in ([], [0, 4], [24, 24], [48, 24]):
        with pytest.raises(ValueError, match="positive and increasing"):
            bins_from_edges(edges)


def test_breakdown_matches_scipy():
    values = {"q0": 1.0, "q1": 0.5, "q2": 1.0, "q3": 0.25, "q4": 0.2, "q5": 0.1, "q6": 0.5, "q7": 0.0}
    starts = {"q0": 0, "q1": 5, "q2": 20, "q3": 30, "q4": 40, "q5": 47, "q6": 60}  # q7: no position
    frame = pd.DataFrame([{"system": s, "queryset": "dev", "metric": "RR@10", "qid": q, "value": v * f, "n_seeds": 2}
                          for s, f in (("m", 1.0), ("n", 0.5)) for q, v in values.items()])
    table = position_breakdown(frame, starts, {"m": "M", "n": "N"}, "RR@10", bins_from_edges([24, 48]), "holm", 0.05)
    m = table[table["system"] == "m"].set_index("bin")
    first, second = [1.0, 0.5, 1.0], [0.25, 0.2, 0.1]
    assert list(m["n_queries"]) == [3, 3, 1] and m.loc[0, "value"] == pytest.approx(np.mean(first))
    assert m.loc[1, "p"] == pytest.approx(stats.ttest_ind(second, first, equal_var=False).pvalue)
    assert math.isnan(m.loc[2, "p"])  # one query in the bin
    raw = table["p"].dropna().to_numpy()
    assert sorted(table["p_adjusted"].dropna()) == pytest.approx(sorted(multipletests(raw, method="holm")[1]))


def test_a_position_that_ties_with_the_first_is_no_test_outside_the_family(sweep):
    from posbias.sweep.report import sweep_caption, sweep_cells

    frame, positions, ranks, bases = sweep
    # position 2 ranks every query as position 1 does (an order-invariant model would, at every position)
    tied = {key: {q: (per_query[q.replace("@p2", "@p0")] if q.endswith("@p2") else r) for q, r in per_query.items()}
            for key, per_query in ranks.items()}
    curves = sweep_curves(with_ranks(per_seed_frame(tied), "RR"), positions, {"m": "Model"}, "RR", STATISTICS, 0.05)
    by_position = curves.set_index("position")
    assert math.isnan(by_position.loc[2, "p"]) and math.isnan(by_position.loc[2, "p_adjusted"])
    assert not by_position.loc[2, "significant"]
    assert by_position.loc[1, "p_adjusted"] == by_position.loc[1, "p"]  # Holm over a family of one
    _, body = sweep_cells(curves)
    assert body[0][3].after.endswith("(no test)") and "no test" not in body[0][1].after + body[0][2].after
    caption = sweep_caption(curves, STATISTICS, 512, 0.3, 4.0, 2, [])
    assert "Holm correction over the 1 test of each ranker (one family each)" in caption
    assert "(no test): nothing to test against position 1" in caption and "1 position, left out" in caption


def test_the_caption_ends_with_the_configured_note(sweep):
    from posbias.sweep.report import sweep_caption

    frame, positions, ranks, bases = sweep
    curves = sweep_curves(with_ranks(per_seed_frame(ranks), "RR"), positions, {"m": "Model"}, "RR", STATISTICS, 0.05)
    plain = sweep_caption(curves, STATISTICS, 512, 0.3, 4.0, 2, [])
    noted = sweep_caption(curves, STATISTICS, 512, 0.3, 4.0, 2, [], note=" The dip at token 0 is the world's. ")
    assert noted == plain + " The dip at token 0 is the world's."
    assert sweep_caption(curves, STATISTICS, 512, 0.3, 4.0, 2, [], note="  ") == plain


def test_each_ranker_s_curve_is_one_family_in_the_sweep_table_as_in_the_sensitivity_table():
    """The same test in the same family in both outputs: a position is a significant drop in the sweep table exactly
    when the sensitivity table counts it (Holm over a ranker's own positions, not over every ranker's)."""
    from posbias.sweep.stats import sweep_sensitivity

    rng = np.random.default_rng(1)
    bases, n_positions = [f"b{i}" for i in range(8)], 4
    ranks = {}
    for model, late in (("m", (3, 11)), ("n", (1, 4))):  # m loses the passage later on; n barely does
        for seed in (1, 2):
            ranks[(model, seed)] = {f"{b}@p{p}": int(rng.integers(1, 3) if p == 0 else rng.integers(*late))
                                    for b in bases for p in range(n_positions)}
    averaged = with_ranks(per_seed_frame(ranks), "RR")
    positions = positions_frame(bases, n_positions)
    models = {"m": "M", "n": "N"}
    curves = sweep_curves(averaged, positions, models, "RR", STATISTICS, 0.05)
    suite = sweep_sensitivity(averaged, positions, models, "RR", STATISTICS, 0.05).set_index("model")
    for model in models:
        own = curves[(curves["model"] == model) & (curves["position"] > 0)]
        assert own["p_adjusted"].tolist() == pytest.approx(list(multipletests(own["p"], method="holm")[1]))
        assert int(own["significant"].sum()) == suite.loc[model, "significant_drops"]
