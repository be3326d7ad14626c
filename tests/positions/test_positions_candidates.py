"""The sparse path's queries and candidate pairs."""

from __future__ import annotations

import numpy as np

from posbias.positions.candidates import QueryCandidates, build, sample_queries, shared_queries


def test_only_queries_with_identical_text_in_both_sets_are_kept_in_the_document_sets_order():
    docs = {"3": "what is a cat", "1": "define dog", "2": "bird"}
    passages = {"1": "define dog", "2": "birds", "3": "what is a cat", "9": "x"}
    assert shared_queries(docs, passages) == ["3", "1"]


def test_the_sample_is_numpys_seeded_choice_with_replacement_made_distinct():
    qids = [f"q{i}" for i in range(10)]
    np.random.seed(0)
    expected = list(dict.fromkeys(np.random.choice(np.array(qids, dtype=object), 8, replace=True)))
    assert sample_queries(qids, 8, 0) == expected
    assert len(expected) < 8  # with replacement: repeats collapse
    assert sample_queries(qids, None, 0) == qids


def test_the_sample_leaves_numpys_global_state_alone_and_draws_what_the_legacy_global_calls_drew():
    qids = [f"q{i}" for i in range(5000)]
    for seed in (0, 7, 12345):
        np.random.seed(seed)  # the study's calls, on the global state
        legacy = list(dict.fromkeys(str(q) for q in np.random.choice(np.array(qids, dtype=object), 300,
                                                                      replace=True)))
        np.random.seed(999)
        before = np.random.get_state()
        assert sample_queries(qids, 300, seed) == legacy
        after = np.random.get_state()
        assert after[0] == before[0] and (after[1] == before[1]).all() and after[2:] == before[2:]
        assert np.random.random() == np.random.RandomState(999).random()  # the next global draw is unchanged


def test_pairs_join_every_relevant_passage_with_judged_and_retrieved_documents_once():
    items = build(["q1", "q2"], {"q1": {"d1": 1, "d0": 0}, "q2": {"d2": 2}},
                  {"q1": {"p1": 1, "p2": 1, "pgone": 1}, "q2": {"p3": 0}},
                  lambda wanted: {pid: ["d1", "d9"] for pid in wanted}, {"p1": "a", "p2": "b", "p3": "c"})
    assert items[0].pairs() == [("p1", "d1"), ("p1", "d9"), ("p2", "d1"), ("p2", "d9")]
    assert items[1].pairs() == []  # its passage is judged not relevant
    assert QueryCandidates("q", ["p"], ["d"]).pairs() == [("p", "d")]
