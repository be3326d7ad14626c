import pandas as pd
import pytest

from posbias.reporting.outcome_table import build_outcome_table, caption, check_one_relevant, to_latex, to_markdown

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
    table = build_outcome_table(per_seed_frame(), [("maxp", "firstp")], k=10)
    labels = {"maxp": "MaxP", "firstp": "FirstP"}
    text = caption(10, len(table))
    latex = to_latex(table, labels, text)
    assert "\\begin{table*}" in latex and "MaxP vs FirstP (dev) & 1 & 6 & 17\\% & 17\\% & 17\\%" in latex
    markdown = to_markdown(table, labels, text)
    assert "| MaxP vs FirstP (dev) | 2 | 6 | 0% | 17% | 17% |" in markdown
    assert "not corrected for the 2 comparisons" in text


def test_query_sets_need_exactly_one_relevant_document():
    check_one_relevant({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}, 1, "qrels.txt")
    with pytest.raises(ValueError, match=r"qrels.txt: query q2 has 2 documents with grade >= 1"):
        check_one_relevant({"q1": {"d1": 1}, "q2": {"d3": 2, "d4": 1}}, 1, "qrels.txt")
    check_one_relevant({"q2": {"d3": 2, "d4": 1}}, 2, "qrels.txt")  # one at grade 2 or above
