"""Truncating documents to their first N tokens of the (offline) BERT WordPiece tokenizer."""

from __future__ import annotations

import gzip
import json
import random

import pytest

from posbias.data.truncation import TruncationCounts, _head, truncate_documents, truncate_texts
from posbias.io import FormatError

OFFLINE = "offline:all-MiniLM-L6-v2"
N = 12


def _count(tokenizer, text):
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


DOCS = [
    {"id": "long", "text": "Tokenization of unbelievably long documents, naïvely: café-style!  " * 4},
    {"id": "short", "text": "  Short\tdocument,\nwith odd   spacing.  "},
    {"id": "subword", "text": "supercalifragilisticexpialidocious " * 5},
    {"id": "titled", "title": "A title counts", "text": "towards the budget of tokens in every single document"},
]


def test_cut_text_is_a_prefix_of_exactly_n_tokens(tokenizer):
    texts = [doc["text"] for doc in DOCS]
    cut = truncate_texts(texts, tokenizer, N)
    for original, kept in zip(texts, cut):
        if _count(tokenizer, original) > N:
            assert original.startswith(kept) and _count(tokenizer, kept) == N
        else:
            assert kept == original


def test_head_ends_with_a_whole_word():
    assert _head("alpha beta gamma", 12) == "alpha beta"  # not "alpha beta g"
    assert _head("one  two", 5) == "one"  # before the whole gap, not inside it
    assert _head("ab\x1ccd ef", 5) == "ab\x1ccd ef"  # \x1c is no gap: BERT deletes it, joining "abcd"
    assert _head("short", 5) == "short"


@pytest.mark.parametrize("chars_per_token", [1, 2, 4])
def test_reading_only_a_head_gives_the_cut_of_the_whole_text(tokenizer, chars_per_token):
    """Heads short enough to need the full-text fallback, and long enough to decide the cut, agree with it."""
    rng = random.Random(chars_per_token)
    pieces = ["word", "Café", "unbelievably", "x" * 30, "U.S.A.", "中文", "e\u0301", "\xa0", "\x1c", "—", "1,431"]
    gaps = ["", " ", "  ", "\n", "\t", "\r\n"]
    texts = ["".join(rng.choice(pieces) + rng.choice(gaps) for _ in range(rng.randint(1, 40))) for _ in range(300)]
    whole = truncate_texts(texts, tokenizer, N, chars_per_token=10**9)
    assert truncate_texts(texts, tokenizer, N, chars_per_token=chars_per_token) == whole
    cut = [kept != text for kept, text in zip(whole, texts)]
    assert any(cut) and not all(cut)


def test_text_of_exactly_n_tokens_is_unchanged(tokenizer):
    text = " ".join(["word"] * N) + "   "
    assert truncate_texts([text], tokenizer, N) == [text]
    assert truncate_texts([text], tokenizer, N - 1) == [" ".join(["word"] * (N - 1))]


def test_documents_stream_to_valid_jsonl(tmp_path, tokenizer):
    source, target = tmp_path / "docs.jsonl.gz", tmp_path / "out" / "docs.jsonl"
    source.write_bytes(gzip.compress("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in DOCS).encode()))

    counts = truncate_documents(source, target, OFFLINE, N, batch_size=3, progress=False)

    out = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert [d["id"] for d in out] == [d["id"] for d in DOCS]
    assert all(set(d) == {"id", "text"} for d in out)  # the title is folded into the text
    assert out[1]["text"] == DOCS[1]["text"]  # byte for byte
    for doc in (out[0], out[2], out[3]):
        assert _count(tokenizer, doc["text"]) == N
    assert out[3]["text"].startswith("A title counts towards")
    assert counts == TruncationCounts(documents=4, cut=3)
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_malformed_line_names_file_and_line_and_leaves_no_output(tmp_path):
    source, target = tmp_path / "docs.jsonl", tmp_path / "out.jsonl"
    source.write_text('{"id": "a", "text": "fine"}\n{"id": "b"}\n', encoding="utf-8")
    with pytest.raises(FormatError, match=rf"^{source}:2: "):
        truncate_documents(source, target, OFFLINE, N, progress=False)
    assert not target.exists()


def test_slow_tokenizer_is_refused(tmp_path):
    from transformers import BertTokenizerLegacy

    from posbias.backbones import resolve

    slow = BertTokenizerLegacy.from_pretrained(resolve(OFFLINE))
    source = tmp_path / "docs.jsonl"
    source.write_text('{"id": "a", "text": "fine"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="slow tokenizer"):
        truncate_documents(source, tmp_path / "out.jsonl", slow, N, progress=False)
