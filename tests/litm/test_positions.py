import math

import pandas as pd
import pytest
from scipy.stats import norm

from posbias.litm.positions import gap_table, position_table


def _rows(size, gold_index, right, n=10, model="m", variant="default"):
    return [{"model": model, "task": "qa", "variant": variant, "size": size, "gold_index": gold_index,
             "example_id": f"q{i}", "correct": i in right} for i in range(n)]


def _wilson(k, n, z=norm.ppf(0.975)):
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


@pytest.fixture
def scored():
    return pd.DataFrame(_rows(3, 0, range(9)) + _rows(3, 1, range(4)) + _rows(3, 2, range(7))
                        + _rows(0, None, range(3)) + _rows(1, 0, range(10)))


def test_accuracy_intervals_and_paired_tests_against_the_best_position(scored):
    table = position_table(scored).set_index(["size", "gold_index"])
    curve = table.loc[3]
    assert curve["accuracy"].tolist() == [0.9, 0.4, 0.7] and curve["n"].tolist() == [10, 10, 10]
    for k, (_, row) in zip((9, 4, 7), curve.iterrows()):
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(_wilson(k, 10))
    assert curve["best"].tolist() == [True, False, False]
    assert math.isnan(curve.loc[0, "mcnemar_p"])
    # position 1 is right on a subset of the best one's questions: 5 discordant pairs, all one way
    assert (curve.loc[1, "only_here"], curve.loc[1, "only_best"], curve.loc[1, "n_paired"]) == (0, 5, 10)
    assert curve.loc[1, "mcnemar_p"] == pytest.approx(2 / 2 ** 5)
    assert curve.loc[2, "mcnemar_p"] == pytest.approx(2 / 2 ** 2)
    levels = position_table(scored).groupby("size")["level"].first().to_dict()
    assert levels == {0: "closedbook", 1: "oracle", 3: "position"}


def test_gap_table_with_reference_levels(scored):
    (row,) = gap_table(position_table(scored)).to_dict("records")
    assert (row["best_index"], row["worst_index"], row["n_positions"], row["n"]) == (0, 1, 3, 10)
    assert row["gap"] == pytest.approx(0.5) and row["first_minus_min"] == pytest.approx(0.5)
    assert row["last_minus_min"] == pytest.approx(0.3)
    assert row["worst_vs_best_p"] == pytest.approx(1 / 16)
    assert (row["closedbook"], row["oracle"]) == (pytest.approx(0.3), 1.0)


def test_ties_pick_the_first_position_and_the_test_pairs_only_shared_questions():
    rows = _rows(4, 0, {0, 1, 2}) + _rows(4, 3, {3, 4, 5}) + _rows(4, 1, {0}, n=6)
    table = position_table(pd.DataFrame(rows, columns=list(rows[0]))).set_index("gold_index")
    assert table["best"].tolist() == [True, False, False]  # indices 0 and 3 tie at 0.3
    assert table.loc[3, "mcnemar_p"] == pytest.approx(1.0)  # 3 discordant pairs each way
    assert (table.loc[1, "n_paired"], table.loc[1, "only_here"], table.loc[1, "only_best"]) == (6, 0, 2)


def test_reference_levels_fall_back_to_the_default_variant():
    rows = (_rows(3, 0, {0}, n=2, variant="query_aware") + _rows(3, 2, {0, 1}, n=2, variant="query_aware")
            + _rows(0, None, {1}, n=2))
    (row,) = gap_table(position_table(pd.DataFrame(rows))).to_dict("records")
    assert row["variant"] == "query_aware" and row["closedbook"] == 0.5 and math.isnan(row["oracle"])
    assert row["best_index"] == 2


def test_duplicates_and_missing_columns_are_refused(scored):
    with pytest.raises(ValueError, match="scored twice"):
        position_table(pd.concat([scored, scored.iloc[:1]]))
    with pytest.raises(ValueError, match="example_id"):
        position_table(scored.drop(columns="example_id"))
