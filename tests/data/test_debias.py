"""De-biased training documents: every word kept once, the order changed at word boundaries, seeded per document."""

from __future__ import annotations

from collections import Counter

import pytest

from posbias.data.debias import debias, debias_documents

TEXT = " ".join(f"w{i}" for i in range(40))


@pytest.mark.parametrize("n_splits", [1, 2, 5, 39, 100])
def test_every_word_is_kept_once(n_splits):
    out = debias(TEXT, "d1", seed=0, n_splits=n_splits)
    assert Counter(out.split()) == Counter(TEXT.split())


def test_one_split_is_a_rotation_that_always_moves_the_start():
    for seed in range(20):
        words = debias(TEXT, "d1", seed=seed).split()
        offset = words.index("w0")
        assert 0 < offset < 40 and words == TEXT.split()[40 - offset:] + TEXT.split()[:40 - offset]


def test_the_cut_is_deterministic_per_document_and_seed():
    assert debias(TEXT, "d1", seed=3) == debias(TEXT, "d1", seed=3)
    rotations = {debias(TEXT, doc_id, seed=3) for doc_id in ("d1", "d2", "d3", "d4", "d5")}
    assert len(rotations) > 1  # documents are cut at different places
    assert len({debias(TEXT, "d1", seed=s) for s in range(6)}) > 1


def test_many_splits_permute_whole_segments():
    outputs = [debias(TEXT, "d7", seed=seed, n_splits=3).split() for seed in range(10)]
    for out in outputs:  # at most four runs of consecutive words
        assert sum(1 for a, b in zip(out, out[1:]) if int(b[1:]) != int(a[1:]) + 1) <= 3
    assert sum(out != TEXT.split() for out in outputs) >= 8  # the identity order is one of 24


def test_short_documents_and_whitespace():
    assert debias("alone", "d", seed=0) == "alone"
    assert debias("", "d", seed=0) == ""
    assert debias("a  b\n", "d", seed=0) == "b a"  # words re-joined with single spaces
    with pytest.raises(ValueError, match="n_splits must be at least 1"):
        debias(TEXT, "d", seed=0, n_splits=0)


def test_records_keep_their_other_fields():
    records = [{"id": 7, "title": "T", "text": "one two three"}]
    (out,) = debias_documents(records, seed=0)
    assert out["id"] == 7 and out["title"] == "T" and sorted(out["text"].split()) == ["one", "three", "two"]
    assert out["text"] == debias("one two three", "7", seed=0)
