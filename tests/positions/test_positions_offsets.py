"""Character offsets to token offsets: tokens of the whitespace words before the offset."""

from __future__ import annotations

from posbias.backbones import token_counter
from posbias.positions.offsets import TokenOffsets, token_offset


def test_offsets_count_whole_words_before_and_a_word_holding_the_offset_starts_there():
    count = token_counter("whitespace")
    text = "alpha beta  gamma delta"
    offsets = TokenOffsets(text, count)
    assert offsets.total == 4
    assert [offsets.at(text.index(w)) for w in ("alpha", "beta", "gamma", "delta")] == [0, 1, 2, 3]
    assert offsets.at(text.index("gamma") + 2) == 2  # inside gamma


def test_offsets_count_wordpiece_tokens_of_the_words(tokenizer):
    count = token_counter("offline:all-MiniLM-L6-v2")
    text = "Unbelievably, antidisestablishmentarianism persists. The end."
    words_before = "Unbelievably, antidisestablishmentarianism persists."
    expected = len(tokenizer(words_before, add_special_tokens=False)["input_ids"])
    assert expected > 3  # several pieces per word: counting words would be wrong
    assert token_offset(text, text.index("The"), count) == expected
