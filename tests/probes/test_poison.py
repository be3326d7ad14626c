"""The poison probe (spec §2.8, §3.2) on a synthetic Re-DocRED: the foil's pairs with a poisoned evidence sentence,
and the three sources of replacement entities (a language model through the cache, a file, an offline swap)."""

from __future__ import annotations

import json

import pytest

from posbias.errors import InputError
from posbias.probes import poison
from posbias.probes.foil import foil
from posbias.docred.pairs import evidence_sentence_id
from posbias.docred.queries import build_query_table
from posbias.docred.documents import read_redocred
from posbias.docred.synthetic import write_synthetic_redocred


@pytest.fixture(scope="module")
def queries(tmp_path_factory):
    path = tmp_path_factory.mktemp("poison") / "test_revised.json"
    write_synthetic_redocred(path, seed=0, n_documents=40)
    return build_query_table(read_redocred(path, "test"))


@pytest.fixture(scope="module")
def sampled(queries):
    return poison.sampled_queries(queries, 8, 0)


def test_the_sample_is_the_foils(queries, sampled):
    assert [q.qid for q in sampled] == [pair.qid for pair in foil(queries, 8, 0)]


def test_every_tail_mention_of_the_evidence_is_replaced_at_its_span(sampled):
    query = sampled[0]
    sentence = poison.poisoned_sentence(query, "Zzyzx")
    evidence = query.document.sentence(evidence_sentence_id(query))
    assert query.tail_longest in evidence and query.tail_longest not in sentence and "Zzyzx" in sentence
    assert sentence == evidence.replace(query.tail_longest, "Zzyzx")  # one name, one mention: the same text
    assert poison.poisoned_sentence(query, "Zzyzx", authors=True) == sentence


def test_the_poison_document_appends_the_poisoned_sentence_to_the_foil(queries, sampled):
    replacements = {q.qid: f"Wrong{i}" for i, q in enumerate(sampled)}
    foils = {pair.qid: pair for pair in foil(queries, 8, 0)}
    pairs = poison.poison(queries, 8, 0, replacements)
    assert len(pairs) == 8 and {p.probe for p in pairs} == {poison.POISON}
    for i, pair in enumerate(pairs):
        assert pair.document_1 == foils[pair.qid].document_1  # the evidence document
        assert pair.document_2.startswith(foils[pair.qid].document_2 + " ")
        assert pair.document_2.endswith(poison.poisoned_sentence(
            next(q for q in sampled if q.qid == pair.qid), replacements[pair.qid]))
    authors = poison.poison(queries, 8, 0, replacements, authors=True)
    assert all(not a.document_2.startswith(f.document_2 + " ") for a, f in zip(authors, pairs))  # no separator


def test_queries_without_a_usable_replacement_are_left_out(queries, sampled, caplog):
    replacements = {q.qid: "Other" for q in sampled[2:]}
    replacements[sampled[2].qid] = sampled[2].tail_longest  # the answer itself poisons nothing
    replacements[sampled[3].qid] = f"the town of {sampled[3].tail_longest}"  # nor a phrase that names it
    pairs = poison.poison(queries, 8, 0, replacements)
    assert [p.qid for p in pairs] == [q.qid for q in sampled[4:]]
    assert "4 of 8 queries left out" in caplog.text


def test_swap_draws_a_name_of_the_tails_type_from_another_document(queries, sampled):
    chosen = poison.swap_replacements(queries, sampled, seed=0)
    assert set(chosen) == {q.qid for q in sampled}
    names = {(d.title, e[0].type, m.name) for d in {q.document.doc_id: q.document for q in queries}.values()
             for e in d.entities for m in e}
    for query in sampled:
        name = chosen[query.qid]
        assert name not in query.tail_names
        assert any(t == query.tail[0].type and n == name and title != query.document.title for title, t, n in names)
    assert poison.swap_replacements(queries, sampled, seed=0) == chosen
    assert poison.swap_replacements(queries, sampled[:1], seed=0)[sampled[0].qid] == chosen[sampled[0].qid]


def test_a_language_model_answers_the_studys_prompt_through_the_cache(sampled, tmp_path):
    from posbias.llm.generate import open_model
    from posbias.llm.types import Decoding, Request

    spec = {"backend": "mock", "model": "echo", "wrapper": "none"}

    def ask(mode):
        model = open_model(spec, tmp_path / "cache", mode, what="llm.models.echo")
        return lambda prompts: [c.text for c in model.generate([Request(prompt=p) for p in prompts], Decoding())]

    chosen = poison.llm_replacements(sampled, ask("read_write"))
    query = sampled[0]
    evidence = query.document.sentence(evidence_sentence_id(query))
    assert poison.prompt(query) == (f"In the sentence: '{evidence}', replace the entity '{query.tail_longest}' with "
                                    "a different entity that makes sense in context but is completely different. "
                                    "Output only the replacement entity. replacement entity: ")
    assert chosen[query.qid] == poison.clean_answer(poison.prompt(query))  # echo answers with the prompt
    assert poison.llm_replacements(sampled, ask("read_only")) == chosen  # replayed, nothing asked


@pytest.mark.parametrize(("text", "entity"), [("Paris", "Paris"), ("  'Lyon'.\nmore", "Lyon"), ('"Nice"', "Nice"),
                                              ("\n\nBrest\n", "Brest"), ("", "")])
def test_an_answer_is_read_as_an_entity_name(text, entity):
    assert poison.clean_answer(text) == entity


def test_a_replacements_file_round_trips_and_a_bad_line_is_named(tmp_path):
    path = tmp_path / "replacements.jsonl"
    poison.write_replacements(path, {"test0-1": "Oslo", "test3-0": "Ålesund"})
    assert poison.read_replacements(path) == {"test0-1": "Oslo", "test3-0": "Ålesund"}
    path.write_text(json.dumps({"qid": "a", "replacement": "b"}) + "\n" + json.dumps({"qid": "c"}) + "\n")
    with pytest.raises(InputError, match=r"replacements.jsonl:2: expected a JSON object with qid and replacement"):
        poison.read_replacements(path)
