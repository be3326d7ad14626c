"""The first relevant chunk, and the mock oracle's view of a chunk."""

from __future__ import annotations

from posbias.positions.judging import (NO_RELEVANT_CHUNK, Judgment, chunk_requests, first_relevant, oracle_grade,
                                       read_judgments)


def test_the_first_chunk_graded_one_or_more_wins_and_unparseable_answers_are_not_relevant():
    judged = read_judgments(["##final score: 0", "nonsense", "##final score: 1", "##final score: 3"])
    assert [j.grade for j in judged] == [0, None, 1, 3]
    assert first_relevant(judged) == 2
    assert first_relevant(judged, min_grade=2) == 3
    assert first_relevant([Judgment(0, "x", None), Judgment(1, "y", 0)]) == NO_RELEVANT_CHUNK


def test_the_oracle_sees_a_whole_relevant_passage_in_a_chunk_whatever_its_spacing_and_case():
    passage = "The capital of Freedonia is Fredville."
    assert oracle_grade("Some text. the capital  of freedonia is fredville. More.", [passage]) == 3
    assert oracle_grade("The capital of Freedonia is", [passage]) == 0
    requests = chunk_requests("capital of freedonia?", ["a", "The capital of Freedonia is Fredville."], [passage])
    assert [meta for _, meta in requests] == [{"answer": "##final score: 0", "order": "original"},
                                              {"answer": "##final score: 3", "order": "original"}]
    assert chunk_requests("q", ["a"])[0][1] == {"order": "original"}  # as the document has it (the order check)
