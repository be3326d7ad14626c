"""UMBRELA's bing prompt and reading a grade from a judge's answer."""

from __future__ import annotations

import pytest

from posbias.positions.umbrela import answer_for, parse_grade, prompt


@pytest.mark.parametrize("answer, grade", [
    ("##final score: 2", 2), ("##final score:3", 3), ("M: 2\nT: 1\n##final score: 1", 1),
    ("Final Score = **0**", 0), ("2", 2), ("**3**.", 3), (answer_for(1), 1),
    ("the format is ##final score: score ... ##final score: 0", 0),
])
def test_grades_are_read_from_the_last_final_score_or_a_bare_number(answer, grade):
    assert parse_grade(answer) == grade


@pytest.mark.parametrize("answer", ["", "1. 1.\n2. 2.\n", "##final score: 7", "relevant", "##final score: score"])
def test_answers_without_a_grade_in_0_to_3_are_unparseable(answer):
    assert parse_grade(answer) is None


def test_the_prompt_holds_query_and_passage_verbatim_braces_included():
    text = prompt("what is {x}?", "a {passage} with braces")
    assert "Query: what is {x}?\nPassage: a {passage} with braces\n" in text
    assert text.startswith("Given a query and a passage, you must provide a score on an integer scale of 0 to 3")
    assert text.endswith("##final score: score without providing any reasoning.")
    assert parse_grade(text) is None  # an echo of the prompt holds no grade
