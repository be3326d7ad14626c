"""Shi et al.'s metrics on judgments whose answers are known by hand."""

import math

import pytest

from posbias.judges.metrics import (choice_pairs, consistency_and_fairness, judge_summary, kind_counts, pair_kind,
                                    repetition_stability)
from posbias.judges.records import Judgment


def asked(question, subject_first_choice, subject_second_choice, repetition=0):
    """One comparison of candidates s (the subject) and o asked both ways."""
    return [Judgment("j", question, "s", "o", "s", subject_first_choice, repetition),
            Judgment("j", question, "o", "s", "s", subject_second_choice, repetition)]


@pytest.mark.parametrize("one, other, kind", [
    ("first", "second", "consistent"), ("second", "first", "consistent"), ("tie", "tie", "consistent"),
    ("neither", "neither", "consistent"), ("first", "first", "primacy"), ("first", "tie", "primacy"),
    ("tie", "first", "primacy"), ("second", "second", "recency"), ("tie", "second", "recency"),
    ("neither", "first", "undirected"), (None, "first", "unread")])
def test_pair_kinds(one, other, kind):
    assert pair_kind(one, other) == kind


def test_consistency_and_fairness_by_hand():
    judgments = (asked("q1", "first", "second") + asked("q2", "first", "first") + asked("q3", "first", "first")
                 + asked("q4", "second", "second") + asked("q5", None, "first"))
    counts = kind_counts(choice_pairs(judgments))
    assert counts == {"consistent": 1, "primacy": 2, "recency": 1, "undirected": 0, "unread": 1}
    consistency, fairness = consistency_and_fairness(counts)
    assert consistency == pytest.approx(1 / 4)
    assert fairness == pytest.approx((1 - 2) / 4)  # a primacy preference is negative


def test_a_judge_that_always_picks_the_first_is_fully_unfair():
    judgments = [judgment for q in range(6) for judgment in asked(f"q{q}", "first", "first")]
    summary = judge_summary(judgments, n_resamples=50)
    assert summary["position_consistency"] == 0 and summary["preference_fairness"] == -1
    assert summary["primacy_share"] == 1


def test_an_order_blind_judge_is_consistent_and_its_kappa_is_one():
    # the subject wins in half the questions, the other candidate in the rest, whatever the order
    judgments = [judgment for q in range(8) for judgment in
                 asked(f"q{q}", *(("first", "second") if q % 2 else ("second", "first")))]
    summary = judge_summary(judgments, n_resamples=50)
    assert summary["position_consistency"] == 1 and summary["preference_fairness"] == 0
    assert summary["order_kappa"] == pytest.approx(1.0)
    low, high = summary["position_consistency_interval"]
    assert low == high == 1


def test_the_interval_resamples_questions_not_comparisons():
    # one question with many consistent comparisons, one with many primacy ones: two clusters, a wide interval
    judgments = []
    for pair in range(10):
        judgments += [Judgment("j", "q1", f"s{pair}", f"o{pair}", f"s{pair}", "first"),
                      Judgment("j", "q1", f"o{pair}", f"s{pair}", f"s{pair}", "second"),
                      Judgment("j", "q2", f"s{pair}", f"o{pair}", f"s{pair}", "first"),
                      Judgment("j", "q2", f"o{pair}", f"s{pair}", f"s{pair}", "first")]
    summary = judge_summary(judgments, n_resamples=200)
    assert summary["n_questions"] == 2 and summary["position_consistency"] == pytest.approx(0.5)
    low, high = summary["position_consistency_interval"]
    assert low == 0 and high == 1  # resampling two questions gives 0, 0.5 or 1


def test_repetition_stability():
    judgments = (asked("q1", "first", "second", 0) + asked("q1", "first", "second", 1)
                 + asked("q1", "second", "second", 2))
    # the subject-first asking: first, first, second (2/3); the subject-second asking: second three times (1)
    assert repetition_stability(judgments) == pytest.approx((2 / 3 + 1) / 2)
    assert repetition_stability(asked("q1", "first", "second")) is None


def test_kappa_is_nan_without_variety():
    judgments = [judgment for q in range(3) for judgment in asked(f"q{q}", "first", "second")]
    assert math.isnan(judge_summary(judgments, n_resamples=20)["order_kappa"])
