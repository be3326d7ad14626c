import pytest

from posbias.reading.matching import has_answer, tokens


def test_tokens_are_nfd_uncased_words_and_single_symbols():
    assert tokens("Café, 1,400!") == ["cafe\u0301", ",", "1", ",", "400", "!"]


@pytest.mark.parametrize("text, answers, expected", [
    ("The capital is Canberra.", ["canberra"], True),
    ("The capital is CANBERRA", ["Canberra"], True),
    ("It happened in 1400.", ["14"], False),  # whole tokens, unlike the QA metric
    ("Edward the Confessor", ["Ed"], False),
    ("written by George Eliot in 1871", ["Mary Ann Evans", "george eliot"], True),
    ("George was born; Eliot was not", ["George Eliot"], False),  # consecutive tokens only
    ("Mama Café opened", ["cafe\u0301"], True),  # composed and decomposed forms agree after NFD
    ("use 3 * 4", ["*"], True),
    ("use 3 x 4", ["*"], False),
    ("anything", [""], True),  # DPR: an answer without tokens matches every text
])
def test_has_answer(text, answers, expected):
    assert has_answer(text, answers) is expected
