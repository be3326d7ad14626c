"""Golden strings for every template: the behaviour of the authors' seven prompt tests, strings written anew."""

import pytest

from posbias.errors import InputError
from posbias.reading.prompts import closedbook_prompt, format_kv_records, kv_prompt, qa_prompt

INSTRUCTION = ("Write a high-quality answer for the given question using only the provided search results "
               "(some of which might be irrelevant).")
DOCS = [{"id": "7", "title": "Alpha page", "text": "alpha body", "score": 0.9, "hasanswer": False},
        {"id": "8", "title": "Beta page", "text": "beta body", "score": "0.8", "hasanswer": True}]
PAIRS = [["k-one", "v-one"], ["k-two", "v-two"], ["k-three", "v-three"]]


def test_qa_prompt_numbers_documents_from_one_without_a_space_before_the_title():
    expected = (f"{INSTRUCTION}\n\nDocument [1](Title: Alpha page) alpha body\nDocument [2](Title: Beta page) beta body"
                "\n\nQuestion: who is it\nAnswer:")
    assert qa_prompt("who is it", DOCS) == expected


def test_qa_prompt_mentioning_random_order_extends_the_instruction_line():
    prompt = qa_prompt("who is it", DOCS, mention_random_ordering=True)
    assert prompt.startswith(INSTRUCTION + " The search results are ordered randomly.\n\nDocument [1](Title: Alpha")
    assert prompt.endswith("beta body\n\nQuestion: who is it\nAnswer:")


def test_query_aware_qa_prompt_asks_before_and_after_and_refuses_random_order_mention():
    expected = (f"{INSTRUCTION}\n\nQuestion: who is it\n\nDocument [1](Title: Alpha page) alpha body\n"
                "Document [2](Title: Beta page) beta body\n\nQuestion: who is it\nAnswer:")
    assert qa_prompt("who is it", DOCS, query_aware=True) == expected
    with pytest.raises(InputError, match="query-aware"):
        qa_prompt("who is it", DOCS, mention_random_ordering=True, query_aware=True)


def test_closedbook_prompt_has_no_instruction():
    assert closedbook_prompt("who is it") == "Question: who is it\nAnswer:"


def test_kv_prompt_formats_records_by_hand():
    expected = "\n".join([
        "Extract the value corresponding to the specified key in the JSON object below.", "", "JSON data:",
        '{"k-one": "v-one",', ' "k-two": "v-two",', ' "k-three": "v-three"}', "", 'Key: "k-two"',
        "Corresponding value:"])
    assert kv_prompt(PAIRS, "k-two") == expected


def test_query_aware_kv_prompt_gives_the_key_first_too():
    expected = "\n".join([
        "Extract the value corresponding to the specified key in the JSON object below.", "", 'Key: "k-two"', "",
        "JSON data:", '{"k-one": "v-one",', ' "k-two": "v-two",', ' "k-three": "v-three"}', "", 'Key: "k-two"',
        "Corresponding value:"])
    assert kv_prompt(PAIRS, "k-two", query_aware=True) == expected


def test_templates_end_without_newline_and_values_with_braces_are_left_alone():
    prompt = qa_prompt("what is {x}", [{"title": "T {0}", "text": "body {y}"}])
    assert prompt.endswith("Document [1](Title: T {0}) body {y}\n\nQuestion: what is {x}\nAnswer:")
    assert format_kv_records([["a", "b"], ["c", "d"]]) == '{"a": "b",\n "c": "d"}'


@pytest.mark.parametrize("call, message", [
    (lambda: qa_prompt("", DOCS), "question"),
    (lambda: qa_prompt("q", []), "closed-book"),
    (lambda: closedbook_prompt(""), "question"),
    (lambda: kv_prompt(PAIRS, "absent"), "not among"),
    (lambda: kv_prompt(PAIRS[:1], "k-one"), "at least 2"),
    (lambda: kv_prompt([["a", "1"], ["a", "2"]], "a"), "repeat"),
])
def test_prompts_refuse_what_the_authors_refuse(call, message):
    with pytest.raises(InputError, match=message):
        call()
