"""The authors' per-cell aggregation on a judge small enough to count by hand."""

import math

import numpy as np
import pytest

from posbias.errors import InputError
from posbias.judges import metrics
from posbias.judges.cell_averages import judge_cell_averages
from posbias.judges.records import Judgment


def asked_both_ways(judge, question, task, subject, subject_first, subject_second):
    """The comparison of `subject` with the reference `ref`, asked with the subject first, then second."""
    return [Judgment(judge, question, subject, "ref", subject, subject_first, 0, task),
            Judgment(judge, question, "ref", subject, subject, subject_second, 0, task)]


JUDGMENTS = [
    *asked_both_ways("J", "q1", "t1", "s1", "first", "second"),   # consistent: s1 both times
    *asked_both_ways("J", "q2", "t1", "s1", "first", "first"),    # primacy
    *asked_both_ways("J", "q3", "t1", "s2", "second", "second"),  # recency
    *asked_both_ways("J", "q4", "t2", "s1", "neither", "neither"),  # in no metric, but a comparison of t2
    *asked_both_ways("J", "q5", "t2", "s1", None, "first"),       # one verdict unread
]


def test_a_judge_counted_by_hand():
    (row,) = judge_cell_averages(JUDGMENTS)
    # cells (s1,t1): PC 1/2, PF (0-1)/1.5; (s2,t1): PC 0, PF 1/1.5; (s1,t2), (s2,t2): nothing counted, 0 and 0.
    # The largest score of a t1 cell is t1's 3 comparisons over 2 subjects; of a t2 cell, 2 over 2.
    assert row["position_consistency"] == pytest.approx(1 / 3)  # pooled: 1 consistent of 3 counted
    assert row["position_consistency_std"] == pytest.approx(math.sqrt(0.046875))  # std of (.5, 0, 0, 0)
    assert row["preference_fairness"] == pytest.approx(0.0)
    assert row["preference_fairness_std"] == pytest.approx(math.sqrt(2 / 9))  # std of (-2/3, 0, 2/3, 0)
    assert row["extraction_rate"] == pytest.approx(8 / 9)  # q5's read verdict is no success, as the authors count
    assert (row["n_pairs"], row["n_cells"]) == (5, 4)


def test_neither_both_times_is_consistent_only_in_the_pooled_metrics():
    counts = metrics.kind_counts(metrics.choice_pairs(JUDGMENTS))
    assert metrics.consistency_and_fairness(counts)[0] == pytest.approx(2 / 4)  # q1 and q4 consistent there


def test_the_cells_span_every_judge_given():
    other = asked_both_ways("K", "q1", "t1", "s1", "second", "second")
    rows = {row["judge"]: row for row in judge_cell_averages(JUDGMENTS + other)}
    assert rows["K"]["n_cells"] == 4  # s2 and t2 come from J's judgments
    # K's one recency pair, scored against t1's 1 comparison over 2 subjects, averaged over 4 cells
    assert rows["K"]["preference_fairness"] == pytest.approx((1 / 0.5) / 4)
    assert rows["J"] == judge_cell_averages(JUDGMENTS)[0]


def test_a_comparison_missing_its_swapped_asking_is_left_out_but_its_cell_kept():
    (row,) = judge_cell_averages(JUDGMENTS + [Judgment("J", "q6", "s3", "ref", "s3", "first", 0, "t2")])
    assert row["n_pairs"] == 5
    assert row["n_cells"] == 6  # s3 is a subject of the benchmark: two more cells of PC 0
    assert row["position_consistency_std"] == pytest.approx(float(np.std([0.5, 0, 0, 0, 0, 0])))


def test_several_repetitions_are_refused():
    again = [Judgment(j.judge, j.question, j.first, j.second, j.subject, j.choice, 1, j.task) for j in JUDGMENTS]
    with pytest.raises(InputError, match=r"one repetition at a time, got repetitions \[0, 1\]"):
        judge_cell_averages(JUDGMENTS + again)
