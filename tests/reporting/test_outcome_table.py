import numpy as np
import pandas as pd
import pytest

from posbias.reporting.outcome_table import (BOTH_HEADER, P_COLUMNS, RETRIEVED_HEADER, adjust_p_values,
                                             build_outcome_table, check_one_relevant, parts)
from posbias.stats.corrections import adjust

LABELS = {"maxp": "MaxP", "firstp": "FirstP"}

# First relevant ranks per query (None: not in the top 10) of a baseline and a model, two seeds.
RANKS = {
    ("firstp", 1): [1, 2, None, 4, None, 3],
    ("maxp", 1): [1, 1, 2, None, None, 6],
    ("firstp", 2): [2, 2, None, 4, 1, 3],
    ("maxp", 2): [1, 1, 2, 5, None, 3],
}


def per_seed_frame() -> pd.DataFrame:
    rows = []
    for (system, seed), ranks in RANKS.items():
        for i, rank in enumerate(ranks):
            rows.append((system, seed, "dev", "RR@10", f"q{i}", 0.0 if rank is None else 1 / rank))
            rows.append((system, seed, "dev", "AP", f"q{i}", 0.5))  # other metrics are ignored
    return pd.DataFrame(rows, columns=["system", "seed", "queryset", "metric", "qid", "value"])


def test_one_row_per_model_and_seed_with_hand_counted_outcomes():
    table = build_outcome_table(per_seed_frame(), [("maxp", "firstp")], k=10).set_index("seed")
    assert list(table.index) == [1, 2]
    first = table.loc[1]
    # seed 1: q4 neither; q2 only the model (B); q3 only the baseline (A); q0, q1, q5 both
    assert (first["n_neither"], first["n_only_a"], first["n_only_b"], first["n_both"]) == (1, 1, 1, 3)
    assert first["share_both"] == pytest.approx(0.5)
    assert first["esl_a"] == pytest.approx((1 + 2 + 3) / 3) and first["esl_b"] == pytest.approx((1 + 1 + 6) / 3)
    assert first["rr_b"] == pytest.approx((1 + 1 + 1 / 6) / 3)
    second = table.loc[2]
    assert (second["n_neither"], second["n_only_a"], second["n_only_b"], second["n_both"]) == (0, 1, 1, 4)


def test_p_values_are_corrected_as_one_family_and_bold_below_the_threshold():
    table = build_outcome_table(per_seed_frame(), [("maxp", "firstp")], k=10)
    table.loc[0, "binomial_p"] = 0.001  # one clearly significant raw p-value
    corrected = adjust_p_values(table, "holm")
    raw = table[list(P_COLUMNS)].to_numpy(float).ravel()
    assert corrected.attrs["n_tests"] == 10  # 2 seeds x 5 tests, none of them nan here
    expected = adjust(raw, "holm").reshape(2, 5)
    assert np.allclose(corrected[[f"{c}_adj" for c in P_COLUMNS]].to_numpy(float), expected)
    assert corrected.loc[0, "binomial_p_adj"] == pytest.approx(0.01)  # Holm: smallest of 10 times 10
    assert (corrected["binomial_p"] == table["binomial_p"]).all()  # raw values kept for the CSV
    assert "<b>0.010</b>" in "".join(p.html() for p in parts(corrected, LABELS, {"dev": 0.05}))
    assert "<b>0.010</b>" not in "".join(p.html() for p in parts(corrected, LABELS, {"dev": 0.01}))  # not below a stricter alpha
    assert "\\textbf{0.010}" in "\n".join(p.latex() for p in parts(corrected, LABELS, {"dev": 0.05}))
    assert "Holm correction over the 10 tests" in parts(corrected, LABELS, {"dev": 0.05})[0].caption


def test_two_tables_per_query_set_with_their_own_captions_and_labels():
    frame = per_seed_frame()
    frame = pd.concat([frame, frame.assign(queryset="msmarco_dev")], ignore_index=True)
    table = adjust_p_values(build_outcome_table(frame, [("maxp", "firstp")], k=10), "fdr_bh")
    printed = parts(table, LABELS, {"dev": 0.05, "msmarco_dev": 0.01})
    assert [p.label for p in printed] == ["tab:outcomes-dev-retrieved", "tab:outcomes-dev-both",
                                          "tab:outcomes-msmarco_dev-retrieved", "tab:outcomes-msmarco_dev-both"]
    assert [p.header for p in printed] == [RETRIEVED_HEADER, BOTH_HEADER] * 2
    assert len(RETRIEVED_HEADER) == 8 and len(BOTH_HEADER) == 11  # instead of one table of 16 columns
    assert all(len(row) == len(p.header) for p in printed for row in p.rows)
    retrieved, both = printed[2], printed[3]
    assert "on msmarco_dev, part 1" in retrieved.caption and "$p < 0.01$" in retrieved.caption
    # one family over both query sets and both parts: 2 query sets x 2 seeds x 5 tests
    assert "Benjamini-Hochberg correction over the 20 tests of the outcome breakdown" in both.caption
    assert [row[:2] for row in retrieved.rows] == [["MaxP vs FirstP", "1"], ["", "2"]]  # label on the first seed
    latex = "\n".join(p.latex() for p in printed)
    assert latex.count("\\begin{table*}") == 4
    assert "\\label{tab:outcomes-msmarco-dev-both}" in latex  # a key that \ref can repeat verbatim
    assert "on msmarco\\_dev, part 2" in latex
    assert "".join(p.html() for p in printed).count("<table>") == 4
    assert "\n".join(p.markdown() for p in printed).count("| Ranker (B) vs baseline (A) | Seed |") == 4


def test_shares_are_rounded_so_that_each_row_sums_to_one_hundred():
    table = adjust_p_values(build_outcome_table(per_seed_frame(), [("maxp", "firstp")], k=10), "none")
    retrieved = parts(table, LABELS, {"dev": 0.05})[0]
    # seed 1: 1, 1, 1 and 3 of 6 queries; rounding each share alone gives 17 + 17 + 17 + 50 = 101
    assert retrieved.rows[0][2:7] == ["6", "17%", "17%", "16%", "50%"]
    assert retrieved.rows[1][2:7] == ["6", "0%", "17%", "17%", "66%"]  # 0, 1, 1, 4 of 6
    for row in retrieved.rows:
        assert sum(int(share.rstrip("%")) for share in row[3:7]) == 100
    assert "& 6 & 17\\% & 17\\% & 16\\% & 50\\% &" in retrieved.latex()
    assert "| MaxP vs FirstP | 1 | 6 | 17% | 17% | 16% | 50% |" in retrieved.markdown()


def test_both_table_has_the_means_over_the_queries_both_runs_retrieve():
    table = adjust_p_values(build_outcome_table(per_seed_frame(), [("maxp", "firstp")], k=10), "none")
    both = parts(table, LABELS, {"dev": 0.05})[1]
    assert both.rows[0][:5] == ["MaxP vs FirstP", "1", "3", "2.00", "2.67"]  # ESL over q0, q1, q5
    assert both.rows[0][7:9] == [f"{(1 + 1 / 2 + 1 / 3) / 3:.3f}", f"{(1 + 1 + 1 / 6) / 3:.3f}"]
    assert "no correction for multiple comparisons" in both.caption


def test_query_sets_need_exactly_one_relevant_document():
    check_one_relevant({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}, 1, "qrels.txt")
    with pytest.raises(ValueError, match=r"qrels.txt: query q2 has 2 documents with grade >= 1"):
        check_one_relevant({"q1": {"d1": 1}, "q2": {"d3": 2, "d4": 1}}, 1, "qrels.txt")
    check_one_relevant({"q2": {"d3": 2, "d4": 1}}, 2, "qrels.txt")  # one at grade 2 or above


def test_identical_runs_have_no_test_shown_as_a_dash_and_left_out_of_the_family():
    frame = per_seed_frame()
    same = frame[frame["system"] == "firstp"].assign(system="copy")
    table = adjust_p_values(build_outcome_table(pd.concat([frame, same], ignore_index=True),
                                                [("maxp", "firstp"), ("copy", "firstp")], k=10), "holm")
    copies = table[table["system"] == "copy"]
    assert copies[list(P_COLUMNS)].isna().all().all()  # every pair ties: no test, never p = 1
    assert table.attrs["n_tests"] == 10  # MaxP's 2 seeds x 5 tests only
    printed = parts(table, {**LABELS, "copy": "Copy"}, {"dev": 0.05})
    copy_row = next(row for row in printed[0].rows if row[0] == "Copy vs FirstP")
    assert copy_row[-1] == "–"
    assert "Holm correction over the 10 tests" in printed[1].caption and "–: no test" in printed[1].caption
