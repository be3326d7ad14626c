"""The literal-bias probe (spec §2.4) on documents written in the Re-DocRED format."""

from __future__ import annotations

import difflib
import json
import logging

import pytest

from posbias.probes.literal import (COMPARISONS, LITERAL, RADAR_CONDITION, LiteralPair, literal, literal_candidates,
                                    literal_pairs, long_and_short_names, renamed_document, renamed_sentences,
                                    short_query)
from posbias.docred.queries import build_query_table
from posbias.docred.documents import read_redocred
from posbias.docred.synthetic import write_synthetic_redocred


def mention(name: str, sent_id: int, start: int, end: int, type_: str = "PER") -> dict:
    return {"name": name, "pos": [start, end], "sent_id": sent_id, "type": type_}


def variant_document(index: int) -> dict:
    """"Ada<i> Lovelace<i> was born in Town<i> ." (P19), the head called "Lovelace<i>" again in sentence 1."""
    first, last, town = f"Ada{index}", f"Lovelace{index}", f"Town{index}"
    sents = [[first, last, "was", "born", "in", town, "."], [last, "wrote", "notes", "."],
             ["Filler", f"d{index}", "says", "nothing", "."]]
    head = [mention(f"{first} {last}", 0, 0, 2), mention(last, 1, 0, 1)]
    return {"title": f"Variant {index}", "sents": sents,
            "vertexSet": [head, [mention(town, 0, 5, 6, "LOC")]],
            "labels": [{"r": "P19", "h": 0, "t": 1, "evidence": [0]}]}


def crowded_document() -> dict:
    """Three head names, two of them in one sentence; the file lists the mentions out of document order."""
    sents = [["Alan", "Mathison", "Turing", "was", "born", "in", "Maida", "Vale", "."],
             ["Turing", "and", "Alan", "Turing", "liked", "tea", "and", "Turing", "ran", "."],
             ["Nobody", "else", "came", "."]]
    head = [mention("Turing", 1, 7, 8), mention("Alan Turing", 1, 2, 4), mention("Alan Mathison Turing", 0, 0, 3),
            mention("Turing", 1, 0, 1)]
    return {"title": "Crowded", "sents": sents, "vertexSet": [head, [mention("Maida Vale", 0, 6, 8, "LOC")]],
            "labels": [{"r": "P19", "h": 0, "t": 1, "evidence": [0]}]}


def tied_document() -> dict:
    """Two short names of equal length: "Robby" is mentioned first in the text, "Bosch" is listed first and sorts
    first, so the tie must go by document order."""
    sents = [["Robert", "Bosch", "was", "born", "in", "Albeck", "."], ["Robby", "smiled", "."],
             ["Bosch", "left", "."]]
    head = [mention("Bosch", 2, 0, 1), mention("Robert Bosch", 0, 0, 2), mention("Robby", 1, 0, 1)]
    return {"title": "Tied", "sents": sents, "vertexSet": [head, [mention("Albeck", 0, 5, 6, "LOC")]],
            "labels": [{"r": "P19", "h": 0, "t": 1, "evidence": [0]}]}


def mismatched_document() -> dict:
    """A mention named "Nexus Q" whose span covers only "Nexus" (the study prints "ERROR" and goes on)."""
    sents = [["Gadget", "Nexus", "was", "born", "in", "Mountainview", "."], ["Nexus", "Q", "streams", "."]]
    head = [mention("Gadget Nexus", 0, 0, 2, "MISC"), mention("Nexus Q", 1, 0, 1, "MISC")]
    return {"title": "Mismatched", "sents": sents, "vertexSet": [head, [mention("Mountainview", 0, 5, 6, "LOC")]],
            "labels": [{"r": "P19", "h": 0, "t": 1, "evidence": [0]}]}


def single_name_document() -> dict:
    sents = [["Solo", "was", "born", "in", "Onlyton", "."], ["Solo", "sang", "."]]
    head = [mention("Solo", 0, 0, 1), mention("Solo", 1, 0, 1)]
    return {"title": "Single name", "sents": sents, "vertexSet": [head, [mention("Onlyton", 0, 4, 5, "LOC")]],
            "labels": [{"r": "P19", "h": 0, "t": 1, "evidence": [0]}]}


def two_evidence_document() -> dict:
    sents = [["Bea", "Twofold", "was", "born", "."], ["Twofold", "was", "born", "in", "Splitby", "."]]
    head = [mention("Bea Twofold", 0, 0, 2), mention("Twofold", 1, 0, 1)]
    return {"title": "Two evidence", "sents": sents, "vertexSet": [head, [mention("Splitby", 1, 4, 5, "LOC")]],
            "labels": [{"r": "P19", "h": 0, "t": 1, "evidence": [0, 1]}]}


def two_query_document() -> dict:
    """Two qualifying facts about one head: only the first query of the title is a candidate."""
    sents = [["Cy", "Doubleday", "was", "born", "in", "Firstburg", "and", "died", "in", "Lastburg", "."],
             ["Doubleday", "wrote", "."]]
    head = [mention("Cy Doubleday", 0, 0, 2), mention("Doubleday", 1, 0, 1)]
    return {"title": "Two queries", "sents": sents,
            "vertexSet": [head, [mention("Firstburg", 0, 5, 6, "LOC")], [mention("Lastburg", 0, 9, 10, "LOC")]],
            "labels": [{"r": "P19", "h": 0, "t": 1, "evidence": [0]}, {"r": "P20", "h": 0, "t": 2, "evidence": [0]}]}


@pytest.fixture()
def queries(tmp_path):
    documents = [crowded_document(), tied_document(), mismatched_document(), single_name_document(),
                 two_evidence_document(), two_query_document(), *(variant_document(i) for i in range(8))]
    path = tmp_path / "test_revised.json"
    path.write_text(json.dumps(documents), encoding="utf-8")
    return build_query_table(read_redocred(path, "test"))


def by_title(queries, title: str):
    return next(q for q in queries if q.document.title == title)


def assert_changes_only_head_spans(query, name: str) -> None:
    """Token by token, the renamed document differs from the original only inside head mention spans, and every
    head span now reads `name`."""
    renamed = renamed_sentences(query, name)
    assert len(renamed) == len(query.document.sents)
    for sent_id, (original, new) in enumerate(zip(query.document.sents, renamed)):
        spans = [m.pos for m in query.head if m.sent_id == sent_id]
        for tag, i1, i2, _, _ in difflib.SequenceMatcher(a=original, b=new, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            assert any(start <= i1 and i2 <= end for start, end in spans), (sent_id, tag, i1, i2, original, new)
        assert " ".join(new).count(name) >= len(set(spans))


def test_candidates_need_two_names_one_evidence_sentence_and_the_first_query_of_a_title(queries):
    titles = [q.document.title for q in literal_candidates(queries)]
    assert titles == ["Crowded", "Tied", "Mismatched", "Two queries", *(f"Variant {i}" for i in range(8))]
    assert [q.qid for q in literal_candidates(queries) if q.document.title == "Two queries"] == ["test5-0"]
    assert sum(q.document.title == "Two queries" for q in queries) == 2  # both facts made it into the pool


def test_long_name_is_the_querys_and_short_ties_go_by_document_order(queries):
    assert long_and_short_names(by_title(queries, "Crowded")) == ("Alan Mathison Turing", "Turing")
    assert long_and_short_names(by_title(queries, "Tied")) == ("Robert Bosch", "Robby")
    with pytest.raises(ValueError, match="one name"):
        long_and_short_names(by_title(queries, "Single name"))


def test_short_query_swaps_the_head_name(queries):
    query = by_title(queries, "Crowded")
    assert query.query == "Where was Alan Mathison Turing born?"
    assert short_query(query, "Turing") == "Where was Turing born?"


def test_several_mentions_in_one_sentence_are_all_rewritten(queries):
    query = by_title(queries, "Crowded")
    assert renamed_document(query, "Turing") == (
        "Turing was born in Maida Vale . Turing and Turing liked tea and Turing ran . Nobody else came .")
    assert renamed_document(query, "Alan Mathison Turing") == (
        "Alan Mathison Turing was born in Maida Vale . Alan Mathison Turing and Alan Mathison Turing liked tea"
        " and Alan Mathison Turing ran . Nobody else came .")


@pytest.mark.parametrize("title", ["Crowded", "Tied", "Two queries", "Variant 3"])
def test_documents_differ_from_the_original_only_at_head_spans(queries, title):
    query = by_title(queries, title)
    long, short = long_and_short_names(query)
    assert_changes_only_head_spans(query, long)
    assert_changes_only_head_spans(query, short)


def test_the_five_comparisons_pair_the_right_queries_and_documents(queries):
    query = by_title(queries, "Crowded")
    pairs = {pair.condition: pair for pair in literal_pairs(query)}
    assert tuple(pairs) == COMPARISONS and RADAR_CONDITION in pairs
    q_long, q_short = "Where was Alan Mathison Turing born?", "Where was Turing born?"
    d_long, d_short = renamed_document(query, "Alan Mathison Turing"), renamed_document(query, "Turing")
    expected = {"LL-LS": (q_long, d_long, q_long, d_short), "LL-SL": (q_long, d_long, q_short, d_long),
                "LL-SS": (q_long, d_long, q_short, d_short), "SS-LS": (q_short, d_short, q_long, d_short),
                "SS-SL": (q_short, d_short, q_short, d_long)}
    for condition, pair in pairs.items():
        assert (pair.query_1, pair.document_1, pair.query_2, pair.document_2) == expected[condition]
        assert pair.probe == LITERAL and pair.qid == query.qid and pair.query == pair.query_1
    assert pairs["SS-SL"].to_dict() == {"probe": LITERAL, "qid": query.qid, "condition": "SS-SL",
                                        "query_1": q_short, "document_1": d_short,
                                        "query_2": q_short, "document_2": d_long}


def test_a_span_that_does_not_spell_its_name_is_warned_about_and_still_replaced(queries, caplog):
    query = by_title(queries, "Mismatched")
    with caplog.at_level(logging.WARNING, logger="posbias.probes.literal"):
        document = renamed_document(query, "Nexus Q")
    assert document == "Nexus Q was born in Mountainview . Nexus Q Q streams ."
    assert any("test2" in r.getMessage() and "'Nexus'" in r.getMessage() and "Nexus Q" in r.getMessage()
               for r in caplog.records if r.levelno == logging.WARNING)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="posbias.probes.literal"):
        renamed_document(by_title(queries, "Crowded"), "Turing")
    assert not caplog.records


def test_the_sample_is_seeded_and_shared_by_the_five_comparisons(queries):
    pairs = literal(queries, n=6, seed=1)
    assert pairs == literal(queries, n=6, seed=1)
    assert all(isinstance(pair, LiteralPair) for pair in pairs) and len(pairs) == 6 * len(COMPARISONS)
    qids = [pair.qid for pair in pairs]
    assert all(len(set(qids[i:i + 5])) == 1 for i in range(0, len(qids), 5))
    assert [p.condition for p in pairs] == list(COMPARISONS) * 6
    assert qids[::5] != [pair.qid for pair in literal(queries, n=6, seed=0)][::5]


def test_synthetic_corpus_runs_and_changes_only_head_spans(tmp_path):
    path = tmp_path / "synthetic.json"
    write_synthetic_redocred(path, seed=3, n_documents=40)
    queries = build_query_table(read_redocred(path, "test"))
    candidates = literal_candidates(queries)
    assert candidates
    pairs = literal(queries, n=len(candidates), seed=1)
    assert len(pairs) == 5 * len(candidates)
    for query in candidates:
        long, short = long_and_short_names(query)
        assert long != short and short_query(query, short) != query.query
        assert_changes_only_head_spans(query, long)
        assert_changes_only_head_spans(query, short)


def test_an_answer_given_only_as_a_demonym_is_no_candidate(tmp_path):
    """Both documents must hold the answer: a fact sentence that says 'Townish' for Town<i> leaves the query out."""
    demonym = variant_document(9)
    demonym["sents"][0] = ["Ada9", "Lovelace9", "was", "a", "Townish", "poet", "."]
    demonym["vertexSet"][1] = [mention("Town9", 0, 4, 5, "LOC")]
    path = tmp_path / "test_revised.json"
    path.write_text(json.dumps([variant_document(0), demonym]), encoding="utf-8")
    queries = build_query_table(read_redocred(path, "test"))
    assert [q.document.title for q in literal_candidates(queries)] == ["Variant 0"]
