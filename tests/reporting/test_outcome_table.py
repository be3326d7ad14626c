import pandas as pd
import pytest

import numpy as np

from posbias.reporting.outcome_table import (P_COLUMNS, adjust_p_values, build_outcome_table, caption,
                                             check_one_relevant, to_html, to_latex, to_markdown)
from posbias.stats.corrections import adjust

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


def test_renderings_and_caption():
    table = adjust_p_values(build_outcome_table(per_seed_frame(), [("maxp", "firstp")], k=10), "none")
    labels = {"maxp": "MaxP", "firstp": "FirstP"}
    text = caption(10, "none", table.attrs["n_tests"], {"dev": 0.05})
    latex = to_latex(table, labels, {"dev": 0.05}, text)
    assert "\\begin{table*}" in latex and "MaxP vs FirstP (dev) & 1 & 6 & 17\\% & 17\\% & 17\\%" in latex
    markdown = to_markdown(table, labels, {"dev": 0.05}, text)
    assert "| MaxP vs FirstP (dev) | 2 | 6 | 0% | 17% | 17% |" in markdown
    assert "no correction for multiple comparisons" in text and "dev: $p < 0.05$" in text


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
    labels = {"maxp": "MaxP", "firstp": "FirstP"}
    assert "<b>0.010</b>" in to_html(corrected, labels, {"dev": 0.05}, "")
    assert "<b>0.010</b>" not in to_html(corrected, labels, {"dev": 0.01}, "")  # not below a stricter alpha
    assert "\\textbf{0.010}" in to_latex(corrected, labels, {"dev": 0.05}, "")
    assert "Holm correction over the 10 tests" in caption(10, "holm", 10, {"dev": 0.05})


def test_query_sets_need_exactly_one_relevant_document():
    check_one_relevant({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}, 1, "qrels.txt")
    with pytest.raises(ValueError, match=r"qrels.txt: query q2 has 2 documents with grade >= 1"):
        check_one_relevant({"q1": {"d1": 1}, "q2": {"d3": 2, "d4": 1}}, 1, "qrels.txt")
    check_one_relevant({"q2": {"d3": 2, "d4": 1}}, 2, "qrels.txt")  # one at grade 2 or above
