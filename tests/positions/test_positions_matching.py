"""Approximate passage matching: normalisation, the two stages, and the vectorised DP against a plain one."""

from __future__ import annotations

import random

import pytest

from posbias.positions.matching import (SUBSEQUENCE, SUBSTRING, Settings, best_subsequence,
                                        longest_common_substring, match, normalise, window_starts)


def plain_longest_common_substring(a: str, b: str) -> int:
    best, previous = 0, [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b, start=1):
            if x == y:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def test_normalisation_keeps_every_offset_and_only_letters_and_digits():
    text = "Hello, World! It's 2024 — ça va?"
    out = normalise(text)
    assert len(out) == len(text)
    assert out == "hello  world  it s 2024    a va "


@pytest.mark.parametrize("seed", range(20))
def test_the_vectorised_substring_dp_agrees_with_the_plain_one(seed):
    rng = random.Random(seed)
    a = "".join(rng.choice("ab c") for _ in range(rng.randint(1, 30)))
    b = "".join(rng.choice("ab c") for _ in range(rng.randint(1, 60)))
    length, end = longest_common_substring(a, b)
    assert length == plain_longest_common_substring(a, b)
    assert b[end - length:end] in a


def test_a_verbatim_passage_is_found_where_it_first_occurs():
    passage = normalise("The capital of Freedonia is Fredville.")
    document = normalise("Intro text here. The capital of Freedonia is Fredville. More. "
                         "The capital of Freedonia is Fredville.")
    found = match(passage, document)
    assert found.stage == SUBSTRING and found.ratio == 1.0
    assert found.start == document.index(passage) == 17


def test_a_passage_edited_in_the_middle_falls_to_the_subsequence_stage_at_its_first_aligned_character():
    original = "the river flows north through the old city and reaches the sea after two hundred miles"
    edited = original.replace("old city", "ancient walled town").replace("two hundred", "200")
    document = "unrelated words at the start of this page " + edited + " and a tail"
    passage = normalise(original)
    longest, _ = longest_common_substring(passage, normalise(document))
    assert longest / len(passage) < 0.8  # so stage 1 rejects it
    found = match(passage, normalise(document))
    assert found is not None and found.stage == SUBSEQUENCE and found.ratio >= 0.7
    assert found.start == document.index("the river")


def test_an_unrelated_document_matches_nothing_and_thresholds_decide():
    passage = normalise("the population of habsburg is fifteen thousand")
    assert match(passage, normalise("quantum chromodynamics lattice gauge theory explained")) is None
    sibling = normalise("the population of habsburg is unknown to many")  # 30 of 46 characters in one run
    assert match(passage, sibling, Settings(subsequence_min=0.9)) is None
    assert match(passage, sibling, Settings(substring_min=0.6)).stage == SUBSTRING
    # a short passage's sibling in the same template passes the subsequence stage (36 of 46 in order): the
    # lenient side of 0.7, which the embedded collection's agreement counts as other documents located
    assert match(passage, sibling).stage == SUBSEQUENCE


def test_windows_cover_the_end_of_the_document_and_short_documents_are_one_window():
    assert window_starts(100, 30, 7)[-1] == 70
    assert window_starts(20, 30, 7) == [0]
    score, start = best_subsequence("abc", "xxxxxxxxabc", Settings(window=1.2, step=0.1))
    assert (score, start) == (3, 8)
