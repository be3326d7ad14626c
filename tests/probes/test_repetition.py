"""The repetition probe (spec §2.6) on documents written in the Re-DocRED format: the paper's pairs, the authors'
coded deviations (§6.1 item 3), and each step of the candidate filter."""

from __future__ import annotations

import json

import pytest

from posbias.errors import InputError
from posbias.docred.queries import ProbeQuery, build_query_table
from posbias.docred.documents import read_redocred
from posbias.probes.repetition import REPETITION, repetition, repetition_candidates, repetition_sentences
from posbias.docred.synthetic import SHAPE_SHARES, write_synthetic_redocred


def document(index: int, sentences: list[str], evidence: list[int], extra_labels: list[dict] | None = None) -> dict:
    """Document `index` ("Doc <index>") from whitespace-tokenised sentences. Every token `H<index>` is a mention of
    entity 0 (the head), `T<index>` of entity 1 (the tail), `U<index>` of entity 2; label 0 is P19 (head, tail).
    Mentions are listed last sentence first, since the release does not list them in sentence order either."""
    sents = [sentence.split() for sentence in sentences]
    names = (f"H{index}", f"T{index}", f"U{index}")
    kinds = ("PER", "LOC", "LOC")
    entities = [[{"name": name, "pos": [position, position + 1], "sent_id": sent_id, "type": kind}
                 for sent_id in reversed(range(len(sents))) for position, token in enumerate(sents[sent_id])
                 if token == name] for name, kind in zip(names, kinds)]
    entities = [entity for entity in entities if entity]
    labels = [{"r": "P19", "h": 0, "t": 1, "evidence": evidence}, *(extra_labels or [])]
    return {"title": f"Doc {index}", "sents": sents, "vertexSet": entities, "labels": labels}


def plain(index: int) -> dict:
    """A candidate of both variants: evidence first, head-only sentences at 2 and 4, neutral ones at 1, 3, 5."""
    h, t = f"H{index}", f"T{index}"
    return document(index, [f"{h} was born in {t} .", "Rain fell .", f"{h} likes tea .", "Wind blew .",
                            f"{h} plays chess .", "Snow came ."], evidence=[0])


PLAIN = range(10)
TAIL_FIRST, DOUBLE_HEAD, DOUBLE_ONLY = 10, 11, 12
TWO_EVIDENCE, TWO_HEADS_IN_EVIDENCE, REPEATED_LABEL, ONE_HEAD_SENTENCE, ONE_NEUTRAL, TWO_FACTS = 13, 14, 15, 16, 17, 18


def fixture_documents() -> list[dict]:
    docs = [plain(i) for i in PLAIN]
    # the tail is mentioned before the evidence sentence: the authors start with sentence 0, not the evidence
    docs.append(document(TAIL_FIRST, ["T10 is a town .", "Rain fell .", "H10 was born in T10 .", "H10 likes tea .",
                                      "Wind blew .", "H10 plays chess ."], evidence=[2]))
    # sentence 1 mentions the head twice: the authors add it twice, the paper adds sentences 1 and 3
    docs.append(document(DOUBLE_HEAD, ["H11 was born in T11 .", "H11 met H11 .", "Rain fell .", "H11 plays chess .",
                                       "Wind blew ."], evidence=[0]))
    # one head-only sentence, with two head mentions: only the authors' list has two entries
    docs.append(document(DOUBLE_ONLY, ["H12 was born in T12 .", "H12 met H12 .", "Rain fell .", "Wind blew ."],
                         evidence=[0]))
    # each of the following fails one step of the filter, under both variants
    docs.append(document(TWO_EVIDENCE, ["H13 was born in T13 .", "T13 is where H13 was born .", "Rain fell .",
                                        "H13 likes tea .", "Wind blew .", "H13 plays chess ."], evidence=[0, 1]))
    docs.append(document(TWO_HEADS_IN_EVIDENCE, ["H14 was born in T14 , said H14 .", "Rain fell .", "H14 likes tea .",
                                                 "Wind blew .", "H14 plays chess ."], evidence=[0]))
    docs.append(document(REPEATED_LABEL, ["H15 was born and died in T15 .", "Rain fell .", "H15 likes tea .",
                                          "Wind blew .", "H15 plays chess ."], evidence=[0],
                         extra_labels=[{"r": "P20", "h": 0, "t": 1, "evidence": [0]}]))
    docs.append(document(ONE_HEAD_SENTENCE, ["H16 was born in T16 .", "Rain fell .", "H16 likes tea .",
                                             "Wind blew ."], evidence=[0]))
    docs.append(document(ONE_NEUTRAL, ["H17 was born in T17 .", "Rain fell .", "H17 likes tea .",
                                       "H17 plays chess ."], evidence=[0]))
    # two facts of one document pass: only the first query of the title is kept
    docs.append(document(TWO_FACTS, ["H18 was born in T18 .", "H18 died in U18 .", "Rain fell .", "H18 likes tea .",
                                     "Wind blew .", "H18 plays chess ."], evidence=[0],
                         extra_labels=[{"r": "P20", "h": 0, "t": 2, "evidence": [1]}]))
    return docs


@pytest.fixture()
def queries(tmp_path) -> list[ProbeQuery]:
    path = tmp_path / "test_revised.json"
    path.write_text(json.dumps(fixture_documents()), encoding="utf-8")
    return build_query_table(read_redocred(path, "test"))


def by_title(queries: list[ProbeQuery], index: int) -> ProbeQuery:
    return next(q for q in queries if q.document.title == f"Doc {index}")


def titles(rows: list[ProbeQuery]) -> set[str]:
    return {q.document.title for q in rows}


def doc_titles(indexes) -> set[str]:
    return {f"Doc {i}" for i in indexes}


def test_candidates_apply_each_filter_step(queries):
    both = doc_titles([*PLAIN, TAIL_FIRST, DOUBLE_HEAD, TWO_FACTS])
    assert titles(repetition_candidates(queries, "paper")) == both
    assert titles(repetition_candidates(queries, "authors")) == both | {f"Doc {DOUBLE_ONLY}"}
    assert repetition_candidates(queries) == repetition_candidates(queries, "paper")


def test_only_the_first_query_of_a_document_is_kept(queries):
    facts = [q for q in queries if q.document.title == f"Doc {TWO_FACTS}"]
    assert len(facts) == 2 and all(repetition_sentences(q) is not None for q in facts)  # both would pass
    kept = [q for q in repetition_candidates(queries) if q.document.title == f"Doc {TWO_FACTS}"]
    assert [q.qid for q in kept] == [f"test{TWO_FACTS}-0"]


def test_paper_pairs_repeat_the_head_after_the_evidence(queries):
    pairs = repetition(queries, n=12, seed=0)
    assert len(pairs) == 12 and {p.probe for p in pairs} == {REPETITION}
    for pair in pairs:
        query = next(q for q in queries if q.qid == pair.qid)
        evidence = query.document.sentence(query.evidence[0])
        head = query.head_longest
        assert pair.document_1.startswith(evidence + " ") and pair.document_2.startswith(evidence + " ")
        assert pair.document_1.split().count(head) > pair.document_2.split().count(head)
        assert pair.query == f"Where was {head} born?"
        added = pair.document_1.removeprefix(evidence + " ")
        added_sentences = [s for s in added.split(" . ") if s]
        assert len(added_sentences) == 2 and added_sentences[0] != added_sentences[1].removesuffix(" .")


def test_paper_takes_the_first_distinct_sentences_in_document_order(queries):
    assert repetition_sentences(by_title(queries, 0)) == repetition_sentences(by_title(queries, 0), "paper")
    chosen = repetition_sentences(by_title(queries, 0))
    assert (chosen.lead, chosen.with_head, chosen.neutral) == (0, (2, 4), (1, 3))
    chosen = repetition_sentences(by_title(queries, DOUBLE_HEAD))
    assert (chosen.lead, chosen.with_head, chosen.neutral) == (0, (1, 3), (2, 4))
    chosen = repetition_sentences(by_title(queries, TAIL_FIRST))
    assert (chosen.lead, chosen.with_head, chosen.neutral) == (2, (3, 5), (1, 4))


def test_authors_start_with_the_first_tail_sentence(queries):
    query = by_title(queries, TAIL_FIRST)
    chosen = repetition_sentences(query, "authors")
    assert chosen.lead == 0 != query.evidence[0]
    pair = next(p for p in repetition(queries, n=14, seed=0, variant="authors") if p.qid == query.qid)
    assert pair.document_1 == "T10 is a town . H10 likes tea . H10 plays chess ."
    assert pair.document_2 == "T10 is a town . Rain fell . Wind blew ."


def test_authors_can_add_one_head_sentence_twice(queries):
    chosen = repetition_sentences(by_title(queries, DOUBLE_HEAD), "authors")
    assert (chosen.lead, chosen.with_head, chosen.neutral) == (0, (1, 1), (2, 4))
    query = by_title(queries, DOUBLE_ONLY)
    assert repetition_sentences(query, "paper") is None
    assert repetition_sentences(query, "authors").with_head == (1, 1)
    pair = next(p for p in repetition(queries, n=14, seed=0, variant="authors") if p.qid == query.qid)
    assert pair.document_1 == "H12 was born in T12 . H12 met H12 . H12 met H12 ."


def test_sampling_is_seeded(queries):
    assert repetition(queries, 5, 0) == repetition(queries, 5, 0)
    assert [p.qid for p in repetition(queries, 5, 0)] != [p.qid for p in repetition(queries, 5, 1)]
    with pytest.raises(InputError, match="probes.n"):
        repetition(queries, n=14, seed=0)  # 13 paper candidates


@pytest.mark.parametrize("call", [lambda qs: repetition(qs, 1, 0, variant="strict"),
                                  lambda qs: repetition_candidates(qs, "Paper"),
                                  lambda qs: repetition_sentences(qs[0], "")])
def test_unknown_variant_is_an_input_error(queries, call):
    with pytest.raises(InputError, match="probes.variants.repetition"):
        call(queries)


def test_synthetic_world_has_a_candidate_in_every_document_that_repeats_its_head(tmp_path):
    path = tmp_path / "synthetic_revised.json"
    n_documents = 40
    write_synthetic_redocred(path, seed=5, n_documents=n_documents)
    queries = build_query_table(read_redocred(path, "test"))
    paper = repetition_candidates(queries, "paper")
    repeating = n_documents * (SHAPE_SHARES["repeated"] + SHAPE_SHARES["variants"]) // 100
    assert len(paper) >= repeating
    assert all(len({m.sent_id for m in q.head}) >= 3 for q in paper)  # evidence and two more head sentences
    assert titles(paper) <= titles(repetition_candidates(queries, "authors"))
    assert len(repetition(queries, n=repeating, seed=0)) == repeating


def test_an_answer_given_only_as_a_demonym_is_no_candidate_under_the_paper(tmp_path):
    """'H20 was a T-ish singer': the annotators tie the mention to T20, the text never spells it; the paper's
    filter leaves it out, the authors' kept it."""
    record = plain(20)
    record["sents"][0] = ["H20", "was", "a", "Tish", "singer", "."]
    record["vertexSet"][1] = [{"name": "T20", "pos": [3, 4], "sent_id": 0, "type": "LOC"}]
    path = tmp_path / "test_revised.json"
    path.write_text(json.dumps([plain(0), record]), encoding="utf-8")
    queries = build_query_table(read_redocred(path, "test"))
    assert titles(repetition_candidates(queries, "paper")) == doc_titles([0])
    assert titles(repetition_candidates(queries, "authors")) == doc_titles([0, 20])
