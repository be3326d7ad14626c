"""RankGPT's listwise logic: windows, prompt, parsing, FirstP cut and the rerank loop (with a scripted model)."""

from __future__ import annotations

import logging

import pytest

from posbias.errors import InputError
from posbias.llm.types import Completion
from posbias.rankers.listwise.prompt import passage_content
from posbias.rankers.rankgpt import (RankGPTSettings, apply_permutation, first_sentences_within, first_stage_order,
                                     parse_permutation, permutation_messages, rerank_listwise, sliding_windows)

WHITESPACE = lambda text: len(text.split())  # noqa: E731  a token counter whose counts are easy to check by eye


# --- windows ---------------------------------------------------------------------------------------------------

def test_one_hundred_candidates_make_rankgpts_nine_windows_back_to_front():
    assert sliding_windows(100) == [(80, 100), (70, 90), (60, 80), (50, 70), (40, 60), (30, 50), (20, 40),
                                    (10, 30), (0, 20)]


@pytest.mark.parametrize("n, expected", [
    (25, [(5, 25), (0, 15)]),  # RankGPT stops after (5, 25); the clamped window ranks the first five too
    (30, [(10, 30), (0, 20)]),
    (20, [(0, 20)]),  # at most a window: one window over all (RankGPT's loop would make none)
    (7, [(0, 7)]),
    (1, []), (0, []),  # nothing to order
])
def test_windows_over_fewer_candidates(n, expected):
    assert sliding_windows(n, window=20, step=10, rank_end=100) == expected


def test_windows_cover_only_the_first_rank_end_candidates():
    assert sliding_windows(1000, rank_end=50) == [(30, 50), (20, 40), (10, 30), (0, 20)]
    assert sliding_windows(1000, window=20, step=10, rank_end=12) == [(0, 12)]


def test_windows_as_long_as_the_step_tile_the_list_and_single_leftovers_are_dropped():
    assert sliding_windows(45, window=20, step=20) == [(25, 45), (5, 25), (0, 5)]
    assert sliding_windows(41, window=20, step=20) == [(21, 41), (1, 21)]  # (0, 1) holds one candidate


@pytest.mark.parametrize("kwargs, name", [({"step": 0}, "step"), ({"window": 1}, "window"),
                                          ({"window": 10, "step": 11}, "step"), ({"rank_end": 0}, "rank_end"),
                                          ({"window": 2.5}, "window")])
def test_window_settings_that_cannot_slide_are_refused_by_name(kwargs, name):
    with pytest.raises(InputError, match=rf"^{name} must"):
        sliding_windows(100, **kwargs)


def test_a_permutation_reorders_only_its_window():
    assert apply_permutation(list("abcdef"), 2, 5, [2, 0, 1]) == ["a", "b", "e", "c", "d", "f"]
    with pytest.raises(ValueError, match="not a permutation"):
        apply_permutation(list("abcdef"), 2, 5, [0, 0, 1])


# --- prompt ----------------------------------------------------------------------------------------------------

def test_the_prompt_is_rankgpts_word_for_word():
    assert permutation_messages("what is x", ["  alpha  beta\n", "gamma"], max_words=None) == (
        {"role": "system", "content": "You are RankGPT, an intelligent assistant that can rank passages based on "
                                      "their relevancy to the query."},
        {"role": "user", "content": "I will provide you with 2 passages, each indicated by number identifier []. "
                                    "\nRank the passages based on their relevance to query: what is x."},
        {"role": "assistant", "content": "Okay, please provide the passages."},
        {"role": "user", "content": "[1] alpha  beta"},
        {"role": "assistant", "content": "Received passage [1]."},
        {"role": "user", "content": "[2] gamma"},
        {"role": "assistant", "content": "Received passage [2]."},
        {"role": "user", "content": "Search Query: what is x. \nRank the 2 passages above based on their relevance "
                                    "to the search query. The passages should be listed in descending order using "
                                    "identifiers. The most relevant passages should be listed first. The output "
                                    "format should be [] > [], e.g., [1] > [2]. Only response the ranking results, "
                                    "do not say any word or explain."},
    )


def test_max_words_keeps_the_first_words_joined_by_single_spaces():
    assert passage_content("  one two\n\nthree   four ", 3) == "one two three"
    assert passage_content("  one two\n\nthree   four ", None) == "one two\n\nthree   four"
    assert passage_content("one two", 300) == "one two"
    messages = permutation_messages("q", ["one two three", "four five"], max_words=2)
    assert [m["content"] for m in messages[3::2][:2]] == ["[1] one two", "[2] four five"]


# --- parsing ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, n, expected", [
    ("[3] > [1] > [2]", 3, [2, 0, 1]),
    ("[2] > [1]", 4, [1, 0, 2, 3]),  # missing ids follow in their original order
    ("Sure! I think [2] is the best, then maybe [4].", 4, [1, 3, 0, 2]),  # words around the ids
    ("[2] > [2] > [1] > [2]", 3, [1, 0, 2]),  # repeats: the first occurrence wins
    ("[0] > [4] > [3]", 3, [2, 0, 1]),  # 0 and n + 1 do not exist
    ("[03]>[1]", 3, [2, 0, 1]),  # leading zeros, no spaces
    ("[10] > [1]", 10, [9, 0, 1, 2, 3, 4, 5, 6, 7, 8]),  # two-digit ids stay whole
    ("[²] > [2]", 2, [1, 0]),  # only ASCII digits count
    ("I cannot rank these.", 3, [0, 1, 2]),
    ("", 0, []),
])
def test_any_answer_becomes_a_full_permutation(text, n, expected):
    assert parse_permutation(text, n) == expected


# --- FirstP ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("limit, expected", [
    (9, "One two three. Four five. Six seven eight nine."),
    (100, "One two three. Four five. Six seven eight nine."),
    (8, "One two three. Four five."),
    (5, "One two three. Four five."),
    (4, "One two three."),
    (3, "One two three."),
    (2, "One two"),  # the first sentence alone is too long: its first words
])
def test_the_longest_sentence_prefix_within_the_limit(limit, expected):
    assert first_sentences_within("One two three. Four five. Six seven eight nine.", limit, WHITESPACE) == expected


def test_sentences_come_from_a_segmenter_that_knows_abbreviations():
    text = "Dr. Smith went home. He slept."
    assert first_sentences_within(text, 4, WHITESPACE) == "Dr. Smith went home."
    assert first_sentences_within(text, 3, WHITESPACE) == "Dr. Smith went"  # not "Dr." cut as a sentence


def test_a_sentence_cut_by_the_character_pre_cut_never_counts_as_whole():
    long_words = " ".join(["x" * 30] * 10)
    # Pre-cut at 10 · 10 = 100 characters: "Alpha. " and a second sentence cut after three of its long words,
    # which fit the limit of 10 tokens but are not a whole sentence.
    assert first_sentences_within(f"Alpha. {long_words} end.", 10, WHITESPACE) == "Alpha."
    assert first_sentences_within(f"Alpha. {long_words} end.", 100, WHITESPACE) == f"Alpha. {long_words} end."


def test_nothing_to_cut():
    assert first_sentences_within("", 10, WHITESPACE) == ""
    assert first_sentences_within("   ", 10, WHITESPACE) == ""
    assert first_sentences_within("Supercalifragilistic.", 1, lambda text: 3 * len(text.split())) == ""


# --- settings --------------------------------------------------------------------------------------------------

def test_settings_from_a_config_mapping():
    settings = RankGPTSettings.from_config({"max_words": 300, "first_tokens": 512,
                                            "first_tokenizer": "bert-base-uncased"}, "models.rankgpt.args")
    assert (settings.window, settings.step, settings.rank_end, settings.max_words) == (20, 10, 100, 300)
    assert settings.decoding.max_new_tokens == 120 and settings.decoding.temperature == 0.0
    assert RankGPTSettings(max_new_tokens=50).decoding.max_new_tokens == 50
    assert RankGPTSettings(window=5, step=5).decoding.max_new_tokens == 30


@pytest.mark.parametrize("section, message", [
    ({"windw": 10, "max_word": 3}, r"^models\.r\.args: unknown keys \['max_word', 'windw'\]"),
    ({"step": 0}, r"^models\.r\.args\.step must"),
    ({"window": 10, "step": 20}, r"^models\.r\.args\.step must be at most the window"),
    ({"max_words": 0}, r"^models\.r\.args\.max_words must"),
    ({"max_words": True}, r"^models\.r\.args\.max_words must"),
    ({"max_new_tokens": "many"}, r"^models\.r\.args\.max_new_tokens must"),
    ({"first_tokens": 512}, r"^models\.r\.args\.first_tokens and first_tokenizer go together"),
    ({"first_tokenizer": "bert-base-uncased"}, r"first_tokens and .* go together"),
    ({"first_tokens": 512, "first_tokenizer": " "}, r"^models\.r\.args\.first_tokenizer must"),
])
def test_bad_settings_are_refused_by_their_config_path(section, message):
    with pytest.raises(InputError, match=message):
        RankGPTSettings.from_config(section, "models.r.args")


# --- reranking -------------------------------------------------------------------------------------------------

class ScriptedModel:
    """Answers every window with its reverse ("[n] > ... > [1]"), taking `latencies[i]` seconds on call i."""

    def __init__(self, latencies=(), finish_reason="stop", answer=None):
        self.requests, self.latencies, self.finish_reason = [], list(latencies), finish_reason
        self.answer = answer or (lambda n: " > ".join(f"[{i}]" for i in range(n, 0, -1)))

    def generate(self, requests, decoding, progress=True):
        assert len(requests) == 1  # windows depend on earlier answers: one at a time
        self.decoding = decoding
        self.requests.extend(requests)
        latency = self.latencies[len(self.requests) - 1] if self.latencies else 0.0
        return [Completion(text=self.answer(requests[0].meta["n_items"]), finish_reason=self.finish_reason,
                           prompt_tokens=None, completion_tokens=None, latency_s=latency, cache_key="",
                           cache_hit=False)]


def _docs(n):
    return [f"d{i}" for i in range(n)]


def _passages(request):
    """The document numbers a request shows, in prompt order (texts are "text of dK")."""
    return [int(m["content"].split("text of d")[1]) for m in request.messages[3:-1:2]]


def test_reversing_every_window_of_thirty_candidates():
    # Windows (10, 30) then (0, 20). Reversing (10, 30): d0..d9, d29..d10. The window (0, 20) then holds
    # d0..d9, d29..d20; reversed it becomes d20..d29, d9..d0. Positions 20-29 keep d19..d10. Final order:
    # d20..d29, d9..d0, d19..d10.
    docs = _docs(30)
    model = ScriptedModel(latencies=[0.5, 0.25])
    run, latency = rerank_listwise(model, {"q1": "query one"}, {"q1": docs},
                                   {d: f"text of {d}" for d in docs}, RankGPTSettings(), progress=False)
    expected = [f"d{i}" for i in [*range(20, 30), *range(9, -1, -1), *range(19, 9, -1)]]
    assert [doc for doc, _ in run["q1"]] == expected
    assert [score for _, score in run["q1"]] == [-float(rank) for rank in range(1, 31)]
    assert latency == {"q1": 0.75}
    first, second = model.requests
    assert (first.meta, second.meta) == ({"id": "q1:10-30", "n_items": 20}, {"id": "q1:0-20", "n_items": 20})
    assert _passages(first) == list(range(10, 30))
    assert _passages(second) == [*range(10), *range(29, 19, -1)]  # what the first answer moved up
    assert model.decoding.max_new_tokens == 120 and model.decoding.temperature == 0.0


def test_candidates_after_rank_end_keep_their_order_below_the_reranked_ones():
    docs = _docs(35)
    model = ScriptedModel(latencies=[1.0, 2.0, 4.0, 8.0])
    run, latency = rerank_listwise(model, {"a": "qa", "b": "qb"}, {"a": docs, "b": docs[:7]},
                                   {d: f"text of {d}" for d in docs}, RankGPTSettings(rank_end=30), progress=False)
    order = [doc for doc, _ in run["a"]]
    assert order[:30] == [f"d{i}" for i in [*range(20, 30), *range(9, -1, -1), *range(19, 9, -1)]]
    assert order[30:] == ["d30", "d31", "d32", "d33", "d34"]
    assert [score for _, score in run["a"]][28:] == [-29.0, -30.0, -31.0, -32.0, -33.0, -34.0, -35.0]
    assert [doc for doc, _ in run["b"]] == ["d6", "d5", "d4", "d3", "d2", "d1", "d0"]  # one window of 7
    assert latency == {"a": 3.0, "b": 4.0}
    assert [r.meta["id"] for r in model.requests] == ["a:10-30", "a:0-20", "b:0-7"]


def test_the_prompt_shows_the_firstp_cut_and_max_words():
    texts = {"d0": "Alpha beta gamma. Delta epsilon. Zeta.", "d1": "One. Two three four five six."}
    model = ScriptedModel()
    settings = RankGPTSettings(first_tokens=5, first_tokenizer="whitespace", max_words=4)
    run, _ = rerank_listwise(model, {"q": "x"}, {"q": ["d0", "d1"]}, texts, settings, progress=False)
    (request,) = model.requests
    assert [m["content"] for m in request.messages[3:-1:2]] == ["[1] Alpha beta gamma. Delta", "[2] One."]
    assert run == {"q": [("d1", -1.0), ("d0", -2.0)]}


def test_a_garbled_answer_keeps_the_window_in_its_given_order(caplog):
    model = ScriptedModel(answer=lambda n: "[2] > [2", finish_reason="length")
    with caplog.at_level(logging.WARNING):
        run, _ = rerank_listwise(model, {"q": "x"}, {"q": ["a", "b", "c"]}, {"a": "", "b": "", "c": ""},
                                 progress=False)
    assert [doc for doc, _ in run["q"]] == ["b", "a", "c"]
    assert "q:0-3" in caplog.text and "max_new_tokens" in caplog.text


@pytest.mark.parametrize("queries, candidates, texts, message", [
    ({}, {"q": ["a", "b"]}, {"a": "", "b": ""}, r"queries of the candidates have no text, e\.g\. \['q'\]"),
    ({"q": "x"}, {"q": ["a", "b", "a"]}, {"a": "", "b": ""}, r"query q: candidates listed twice: \['a'\]"),
    ({"q": "x"}, {"q": ["a", "b"]}, {"a": ""}, r"1 candidate documents have no text, e\.g\. \['b'\]"),
])
def test_inputs_are_checked_before_any_model_call(queries, candidates, texts, message):
    model = ScriptedModel()
    with pytest.raises(InputError, match=message):
        rerank_listwise(model, queries, candidates, texts, progress=False)
    assert model.requests == []


def test_documents_after_rank_end_need_no_text():
    run, _ = rerank_listwise(ScriptedModel(), {"q": "x"}, {"q": ["a", "b", "c"]}, {"a": "", "b": ""},
                             RankGPTSettings(rank_end=2), progress=False)
    assert [doc for doc, _ in run["q"]] == ["b", "a", "c"]


def test_first_stage_order_is_trec_evals():
    assert first_stage_order({"a": 1.0, "b": 2.0, "c": 1.0, "d": 0.5}) == ["b", "c", "a", "d"]


@pytest.mark.parametrize("text, n, faults", [
    ("[2] > [1] > [3]", 3, {"malformed": 0, "out_of_range": 0, "repeated": 0, "missing": 0}),
    ("I cannot rank these.", 3, {"malformed": 1, "out_of_range": 0, "repeated": 0, "missing": 3}),
    ("[2] > [2] > [7] > [1]", 3, {"malformed": 0, "out_of_range": 1, "repeated": 1, "missing": 1}),
    ("[3]", 4, {"malformed": 0, "out_of_range": 0, "repeated": 0, "missing": 3}),
])
def test_answer_faults_count_what_parsing_mends_by_kind(text, n, faults):
    from posbias.rankers.listwise.parsing import answer_faults

    assert answer_faults(text, n) == faults
    assert sorted(parse_permutation(text, n)) == list(range(n))  # mended into a full permutation all the same
