"""What every scorer inherits from `Scorer`: words as tokens without a tokenizer, documents past the window as
truncated, one input per pair, the window in its description."""

import numpy as np

from posbias.scoring.protocol import Scorer


class Words(Scorer):
    def score(self, pairs, metas=None):
        return np.zeros(len(pairs))


def test_a_scorer_without_a_window_truncates_nothing_and_counts_words():
    scorer = Words()
    assert scorer.count_tokens("three short words") == 3
    assert scorer.truncated(["a b c d e", ""]).tolist() == [False, False]
    assert scorer.input_count([("q", "d")] * 4) == 4 and scorer.describe() == {"window": None}


def test_documents_longer_than_the_window_are_truncated():
    scorer = Words()
    scorer.window = 3
    assert scorer.truncated(["a b c", "a b c d", ""]).tolist() == [False, True, False]
    assert scorer.describe() == {"window": 3}
