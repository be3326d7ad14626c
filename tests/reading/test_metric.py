import logging

import pytest

from posbias.reading import metric
from posbias.reading.metric import (best_subspan_em, empty_first_line, kv_accuracy, kv_strict_accuracy,
                                 normalize_answer)

UUID = "0b6f2a1e-8c3d-4b8e-9f4e-2f1d7c6a5b40"


@pytest.mark.parametrize("text, expected", [
    ("The Eiffel Tower", "eiffel tower"),
    ("  a  cat,   an owl and THE dog!  ", "cat owl and dog"),
    ("U.S.A.", "usa"),
    ("theatre", "theatre"),  # articles only as whole words
    # typographic dashes and quotes are not ASCII punctuation: they survive
    ("rock–paper “scissors”", "rock–paper “scissors”"),
    ("*", ""),
])
def test_normalize_answer(text, expected):
    assert normalize_answer(text) == expected


def test_only_the_first_line_counts_and_a_leading_newline_scores_zero():
    assert best_subspan_em("Paris is the answer\nnot Rome", ["Rome"]) == 0.0
    assert best_subspan_em("Paris is the answer\nnot Rome", ["paris"]) == 1.0
    assert best_subspan_em("\nParis", ["Paris"]) == 0.0
    assert empty_first_line("\nParis") and empty_first_line("   \nParis") and not empty_first_line(" Paris\n")
    assert best_subspan_em("\nParis", ["Paris"], lstrip_first=True) == 1.0  # the Llama-2 script strips first


def test_substring_test_is_lenient_on_short_golds():
    assert best_subspan_em("It happened in 1400.", ["14"]) == 1.0
    assert best_subspan_em("Edward the Confessor", ["Ed"]) == 1.0
    assert best_subspan_em("It happened in 1400.", ["15", "1401"]) == 0.0
    assert best_subspan_em("The answer is Mary-Ann", ["maryann"]) == 1.0  # punctuation removed on both sides


def test_an_empty_normalised_gold_matches_everything_and_is_logged_once(caplog):
    metric._warned_empty_golds.discard("*")
    with caplog.at_level(logging.WARNING, logger="posbias.reading.metric"):
        assert best_subspan_em("no idea", ["*"]) == 1.0
        assert best_subspan_em("", ["*"]) == 1.0
    warnings = [r for r in caplog.records if "'*'" in r.getMessage()]
    assert len(warnings) == 1


def test_kv_accuracy_is_case_insensitive_on_the_whole_raw_completion():
    assert kv_accuracy(f"\n\nThe value is {UUID.upper()}.", UUID) == 1.0
    assert kv_accuracy('{"a": "b",\n "' + UUID + '"}', UUID) == 1.0  # copying the context scores
    assert kv_accuracy(UUID[:-1], UUID) == 0.0


def test_strict_kv_accuracy_wants_exactly_the_value_on_the_first_line():
    assert kv_strict_accuracy(f' "{UUID}".\nmore', UUID) == 1.0
    assert kv_strict_accuracy(f"The value is {UUID}", UUID) == 0.0
    assert kv_strict_accuracy(f"\n{UUID}", UUID) == 0.0
    assert kv_strict_accuracy(UUID.upper(), UUID) == 0.0
