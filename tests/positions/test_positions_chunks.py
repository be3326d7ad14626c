"""Sentence-preserving chunks."""

from __future__ import annotations

from posbias.backbones import token_counter
from posbias.positions.chunks import chunk

COUNT = token_counter("whitespace")


def test_chunks_keep_sentences_whole_within_the_limit_and_count_their_start():
    text = "One two three. Four five six seven. Eight nine. Ten eleven twelve thirteen fourteen."
    pieces = chunk(text, 6, 10, COUNT)
    assert [p.text for p in pieces] == ["One two three.", "Four five six seven. Eight nine.",
                                        "Ten eleven twelve thirteen fourteen."]
    assert [p.start_token for p in pieces] == [0, 3, 9]
    assert all(p.tokens <= 6 for p in pieces)


def test_at_most_max_chunks_and_a_long_sentence_is_cut_into_word_runs():
    text = " ".join(f"w{i}" for i in range(25)) + ". Short one."
    pieces = chunk(text, 10, 2, COUNT)
    assert len(pieces) == 2 and [p.tokens for p in pieces] == [10, 10]
    assert pieces[1].text.startswith("w10 ")
    assert chunk("", 10, 3, COUNT) == []
