"""The mock backend's exact answers."""

from __future__ import annotations

import pytest

from posbias.errors import InputError
from posbias.llm.backends import make_backend
from posbias.llm.backends.mock import UNKNOWN, u_curve_p
from posbias.llm.spec import ModelSpec
from posbias.llm.types import Decoding, Request


def answer(kind: str, request: Request, decoding: Decoding = Decoding(), wrapper: str = "none", **options):
    backend = make_backend(ModelSpec(backend="mock", model=kind, wrapper=wrapper, options=options))
    return backend.complete(backend.render(request), decoding, request.meta)


def test_oracle_and_first_item():
    request = Request(prompt="q", meta={"answer": "Paris", "first_item": "Lyon"})
    assert answer("oracle", request).text == "Paris"
    assert answer("first_item", request).text == "Lyon"


def test_order_biased_is_the_oracle_as_written_and_says_0_to_anything_rearranged():
    as_written = Request(prompt="q", meta={"answer": "##final score: 3", "order": "original"})
    assert answer("order_biased", as_written).text == "##final score: 3"
    for order in ("reversed", "swapped"):  # UMBRELA reads "0" as grade 0, the RAG verdict as NO
        assert answer("order_biased", Request(prompt="q", meta={"answer": "YES", "order": order})).text == "0"
    backend = make_backend(ModelSpec(backend="mock", model="order_biased"))
    assert backend.key_fields(as_written) == {"meta": {"answer": "##final score: 3", "order": "original"}}
    with pytest.raises(ValueError, match=r"\['order'\]"):
        answer("order_biased", Request(prompt="q", meta={"answer": "a"}))


def test_echo_answers_what_was_sent():
    result = answer("echo", Request(prompt="one two three"), wrapper="human_assistant")
    assert result.text == "\n\nHuman: one two three\n\nAssistant:"
    assert (result.prompt_tokens, result.completion_tokens, result.finish_reason) == (5, 5, "stop")
    assert answer("echo", Request(prompt="line one\nline two"), Decoding(stop=("\n",))).text == "line one"
    assert answer("echo", Request(prompt="hi there"), wrapper="messages").text == "hi there"


def test_permutations():
    assert answer("identity", Request(prompt="q", meta={"n_items": 4})).text == "[1] > [2] > [3] > [4]"
    assert answer("reverse", Request(prompt="q", meta={"n_items": 3})).text == "[3] > [2] > [1]"


def u_curve_correct(n_items, gold_index, n_examples=8, **options):
    correct = []
    for i in range(n_examples):
        meta = {"answer": "gold", "example_index": i, "n_examples": n_examples, "n_items": n_items,
                "gold_index": gold_index}
        text = answer("u_curve", Request(prompt="q", meta=meta), **options).text
        assert text in ("gold", UNKNOWN)
        correct.append(text == "gold")
    return correct


def test_u_curve_accuracy_at_each_position_is_exact():
    # floor 0.5, five positions: p = 1, 0.625, 0.5, 0.625, 1, so (i + 0.5) / 8 < p for 8, 5, 4, 5, 8 examples
    assert [sum(u_curve_correct(5, g)) for g in range(5)] == [8, 5, 4, 5, 8]
    assert [u_curve_p(5, g) for g in range(5)] == [1.0, 0.625, 0.5, 0.625, 1.0]
    assert sum(u_curve_correct(5, None)) == 2  # closed book: 0.25
    assert sum(u_curve_correct(1, 0)) == 8  # oracle: the gold item alone
    assert sum(u_curve_correct(5, 2, floor=0.0)) == 0
    assert sum(u_curve_correct(5, None, closed_book=0.5)) == 4


def test_u_curve_correct_sets_are_nested():
    middle, quarter = u_curve_correct(5, 2), u_curve_correct(5, 1)
    assert all(q for m, q in zip(middle, quarter) if m)  # correct in the middle: correct nearer the edge too


def test_meta_changes_the_key_fields():
    backend = make_backend(ModelSpec(backend="mock", model="oracle"))
    first = backend.key_fields(Request(prompt="q", meta={"answer": "a", "unread": 1}))
    assert first == {"meta": {"answer": "a"}}
    assert backend.key_fields(Request(prompt="q", meta={"answer": "b"})) != first


def test_unknown_kind_missing_meta_and_unknown_options():
    with pytest.raises(InputError, match="'coin'"):
        make_backend(ModelSpec(backend="mock", model="coin"))
    with pytest.raises(ValueError, match=r"\['answer'\]"):
        answer("oracle", Request(prompt="q"))
    with pytest.raises(InputError, match="not 'chat_template'"):
        make_backend(ModelSpec(backend="mock", model="echo", wrapper="chat_template"))
    with pytest.raises(InputError, match="no options \\['flor'\\]"):
        make_backend(ModelSpec(backend="mock", model="u_curve", options={"flor": 0.3}))
