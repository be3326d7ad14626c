import math

import pandas as pd
import pytest
from scipy.stats import norm
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from posbias.litm.stats import gap_table, position_table


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


def test_accuracy_intervals_and_paired_tests_against_the_first_position(scored):
    table = position_table(scored).set_index(["size", "gold_index"])
    curve = table.loc[3]
    assert curve["accuracy"].tolist() == [0.9, 0.4, 0.7] and curve["n"].tolist() == [10, 10, 10]
    for k, (_, row) in zip((9, 4, 7), curve.iterrows()):
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(_wilson(k, 10))
    assert curve["best"].tolist() == [True, False, False] and curve["reference"].tolist() == [True, False, False]
    assert math.isnan(curve.loc[0, "mcnemar_p"]) and math.isnan(curve.loc[0, "mcnemar_p_adjusted"])
    # index 1 is right on a subset of index 0's questions: 5 discordant pairs, all one way
    assert (curve.loc[1, "only_here"], curve.loc[1, "only_reference"], curve.loc[1, "n_paired"]) == (0, 5, 10)
    assert curve.loc[1, "mcnemar_p"] == pytest.approx(2 / 2 ** 5)
    assert curve.loc[2, "mcnemar_p"] == pytest.approx(2 / 2 ** 2)
    # Holm over the curve's two tests, as statsmodels computes it
    expected = multipletests([2 / 2 ** 5, 2 / 2 ** 2], method="holm")[1]
    assert curve.loc[[1, 2], "mcnemar_p_adjusted"].tolist() == pytest.approx(expected.tolist())
    levels = position_table(scored).groupby("size")["level"].first().to_dict()
    assert levels == {0: "closedbook", 1: "oracle", 3: "position"}


def test_gap_table_with_reference_levels(scored):
    (row,) = gap_table(position_table(scored)).to_dict("records")
    assert (row["best_index"], row["worst_index"], row["n_positions"], row["n"]) == (0, 1, 3, 10)
    assert row["gap"] == pytest.approx(0.5) and row["first_minus_min"] == pytest.approx(0.5)
    assert row["last_minus_min"] == pytest.approx(0.3)
    assert "worst_vs_best_p" not in row  # worst and best are both picked from the answers: no test
    assert (row["closedbook"], row["oracle"]) == (pytest.approx(0.3), 1.0)


def test_ties_pick_the_first_position_and_the_test_pairs_only_shared_questions():
    rows = _rows(4, 0, {0, 1, 2}) + _rows(4, 3, {3, 4, 5}) + _rows(4, 1, {0}, n=6)
    table = position_table(pd.DataFrame(rows, columns=list(rows[0]))).set_index("gold_index")
    assert table["best"].tolist() == [True, False, False]  # indices 0 and 3 tie at 0.3
    assert table.loc[3, "mcnemar_p"] == pytest.approx(1.0)  # 3 discordant pairs each way
    assert (table.loc[1, "n_paired"], table.loc[1, "only_here"], table.loc[1, "only_reference"]) == (6, 0, 2)


def test_the_reference_is_the_first_position_even_where_another_is_best():
    # A U curve whose best position is the last: the old test against the best would have tested index 0 too
    rows = (_rows(5, 0, range(6), n=20) + _rows(5, 2, range(2), n=20) + _rows(5, 4, range(16), n=20)
            + _rows(5, 3, range(6), n=20))
    table = position_table(pd.DataFrame(rows), correction="holm").set_index("gold_index")
    assert table["best"].tolist() == [False, False, False, True]  # index 4 is the best ...
    assert table["reference"].tolist() == [True, False, False, False]  # ... but index 0 is the reference
    assert math.isnan(table.loc[0, "mcnemar_p"]) and not math.isnan(table.loc[4, "mcnemar_p"])
    answers = {g: pd.Series([i in set(r) for i in range(20)]) for g, r in
               ((0, range(6)), (2, range(2)), (3, range(6)), (4, range(16)))}

    def statsmodels_p(g):
        here, ref = answers[g], answers[0]
        table_2x2 = [[int((here & ref).sum()), int((here & ~ref).sum())],
                     [int((~here & ref).sum()), int((~here & ~ref).sum())]]
        return mcnemar(table_2x2, exact=True).pvalue

    assert table.loc[2, "mcnemar_p"] == pytest.approx(statsmodels_p(2))
    assert table.loc[4, "mcnemar_p"] == pytest.approx(statsmodels_p(4))
    # index 3 answers exactly as index 0 does: no test (not p = 1), and out of the family
    assert (table.loc[3, "only_here"], table.loc[3, "only_reference"]) == (0, 0)
    assert math.isnan(table.loc[3, "mcnemar_p"]) and math.isnan(table.loc[3, "mcnemar_p_adjusted"])
    raw = [statsmodels_p(2), statsmodels_p(4)]
    for method in ("holm", "bonferroni", "fdr_bh"):
        adjusted = position_table(pd.DataFrame(rows), correction=method).set_index("gold_index")
        assert adjusted.loc[[2, 4], "mcnemar_p_adjusted"].tolist() == pytest.approx(
            multipletests(raw, method=method)[1].tolist())
        assert (adjusted.loc[[2, 4], "mcnemar_p_adjusted"] >= adjusted.loc[[2, 4], "mcnemar_p"]).all()
    unadjusted = position_table(pd.DataFrame(rows), correction="none").set_index("gold_index")
    assert unadjusted.loc[[2, 4], "mcnemar_p_adjusted"].tolist() == pytest.approx(raw)


def test_each_curve_is_its_own_family():
    one = _rows(3, 0, range(8), n=12) + _rows(3, 1, range(2), n=12) + _rows(3, 2, range(3), n=12)
    other = [dict(row, model="n") for row in _rows(3, 0, range(5), n=12) + _rows(3, 1, range(9), n=12)
             + _rows(3, 2, range(4), n=12)]
    both = position_table(pd.DataFrame(one + other), correction="bonferroni").set_index(["model", "gold_index"])
    alone = position_table(pd.DataFrame(one), correction="bonferroni").set_index(["model", "gold_index"])
    assert both.loc["m", "mcnemar_p_adjusted"].tolist()[1:] == pytest.approx(
        alone.loc["m", "mcnemar_p_adjusted"].tolist()[1:])
    assert both.loc[("m", 1), "mcnemar_p_adjusted"] == pytest.approx(min(1.0, 2 * both.loc[("m", 1), "mcnemar_p"]))


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


def test_the_table_marks_differences_from_position_1_and_says_so_in_its_caption(tmp_path):
    from posbias.reporting.position_tables import position_cells, position_table_outputs

    # 20 questions: index 0 right on 6, index 2 on 2 (not significant), index 3 as index 0 (no test), index 4 on 16
    rows = (_rows(5, 0, range(6), n=20) + _rows(5, 2, range(2), n=20) + _rows(5, 3, range(6), n=20)
            + _rows(5, 4, range(16), n=20) + _rows(0, None, range(3), n=20) + _rows(1, 0, range(20), n=20))
    positions = position_table(pd.DataFrame(rows), correction="holm")
    gaps = gap_table(positions)
    header, body = position_cells(positions, gaps, "qa", 5, {"m": "Model"})
    assert header[1:5] == ["pos. 1", "pos. 3", "pos. 4", "pos. 5"]
    first, third, fourth, fifth = body[0][1:5]
    assert first.superscript == "" and not first.bold and "no test" not in first.after  # the reference
    assert third.superscript == "" and "no test" not in third.after  # adjusted p = 0.125: no mark
    assert fourth.after.endswith("(no test)") and fourth.superscript == ""
    assert fifth.superscript == "*" and fifth.bold  # 10 right only here, none only at index 0
    outputs = {fmt: str(tmp_path / f"qa_5.{fmt}") for fmt in ("tex", "csv", "md", "html")}
    position_table_outputs(positions, gaps, "qa", 5, {"m": "Model"}, outputs, "holm")
    caption = (tmp_path / "qa_5.md").read_text()
    assert "*: differs from position 1, the reference fixed before the answers were seen" in caption
    assert "Holm correction over the 2 tests of each model's curve (one family each)" in caption
    assert "(no test): every question is answered right or wrong at both positions alike" in caption
    assert "1 position, left out of the family" in caption and "uncorrected" not in caption
    csv = pd.read_csv(outputs["csv"])
    assert {"reference", "mcnemar_p", "mcnemar_p_adjusted", "only_reference"} <= set(csv.columns)
    position_table_outputs(positions, gaps, "qa", 5, {"m": "Model"}, outputs, "none")
    assert "no correction for multiple comparisons" in (tmp_path / "qa_5.md").read_text()


def test_each_curve_s_sensitivity_is_the_shared_metric_suite_with_exact_mcnemar_tests(tmp_path):
    from posbias.litm.stats import sensitivity_table
    from posbias.reporting.position_tables import sensitivity_table_outputs

    # 10 questions at 3 positions: all right at index 0, the first 2 at index 1, the first 6 at index 2
    rows = _rows(3, 0, range(10), n=10) + _rows(3, 1, range(2), n=10) + _rows(3, 2, range(6), n=10)
    rows += _rows(0, None, range(3), n=10) + _rows(1, 0, range(9), n=10)  # closed-book and oracle: not positions
    table = sensitivity_table(pd.DataFrame(rows), correction="holm")
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["reference_mean"], row["best"], row["worst"]) == (1.0, 1.0, 0.2)
    assert row["psi"] == pytest.approx(0.8) and row["worst_drop"] == pytest.approx(0.8)
    assert row["primacy"] == pytest.approx(0.8) and row["recency"] == pytest.approx(0.4)
    # exact McNemar: 8 and 4 questions right only at index 0, so p = 2 / 2^8 and 2 / 2^4; Holm: 2 / 2^7 and 1 / 8
    # the first document of three is read: a third of the context (a 0-based index over the size would say 0)
    assert row["significant_drops"] == 1 and row["reach"] == 0 and row["reach_fraction"] == pytest.approx(1 / 3)
    flat = sensitivity_table(pd.DataFrame(_rows(3, 0, range(10), n=10) + _rows(3, 1, range(10), n=10)
                                          + _rows(3, 2, range(10), n=10)))
    assert flat.iloc[0]["reach"] == 2 and flat.iloc[0]["reach_fraction"] == 1.0  # no drop: the whole context
    outputs = {fmt: str(tmp_path / f"sensitivity.{fmt}") for fmt in ("tex", "csv", "md", "html")}
    sensitivity_table_outputs(table, {"m": "Model"}, outputs, "holm")
    assert "| Model | qa | 3 | 100.0 | 0.800 | 0.800 | 80.0 | 80.0 | 40.0 | 1 | 1 |" in open(outputs["md"]).read()
