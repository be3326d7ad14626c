import random

import pytest

from posbias.data.farrelevant import build_document


def words(n, tag):
    return " ".join(f"{tag}{i}" for i in range(n))


def test_placement_rule_holds_for_many_documents():
    pool = [words(n, f"p{k}x") for k, n in enumerate([5, 7, 9, 11, 13, 6, 8] * 5)]
    length = lambda text: len(text.split())  # noqa: E731
    rng = random.Random(3)
    for trial in range(300):
        relevant = words(rng.randint(4, 15), "rel")
        doc = build_document(relevant, pool, length, rng, first_window=32, max_tokens=96)
        assert doc.passages.count(relevant) == 1
        assert doc.passages[doc.relevant_index] == relevant
        # the relevant passage starts after the first window ...
        assert doc.relevant_start > 32
        assert len(doc.text.split()[:doc.relevant_start]) == doc.relevant_start
        assert doc.text.split()[doc.relevant_start] == relevant.split()[0]
        # ... and the document respects the length cap
        assert doc.n_tokens == len(doc.text.split()) <= 96


def test_same_seed_same_document_and_clear_error_when_impossible():
    pool = [words(6, f"p{k}x") for k in range(20)]
    length = lambda text: len(text.split())  # noqa: E731
    a = build_document("r s t", pool, length, random.Random(1), 10, 40)
    b = build_document("r s t", pool, length, random.Random(1), 10, 40)
    assert a == b
    with pytest.raises(ValueError, match="cannot start after token"):
        build_document(words(35, "r"), pool, length, random.Random(1), 10, 40)
