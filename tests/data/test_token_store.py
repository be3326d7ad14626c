import io
import json
import os
import re

import numpy as np
import pytest

from posbias.data.token_store import FILES, TokenStore, build_token_store
from posbias.errors import DiskFullError, InputError
from posbias.io import write_documents

OFFLINE = "offline:all-MiniLM-L6-v2"
DOCS = [
    {"id": "d10", "text": "the capital of zorvia is mendal"},
    {"id": "d2", "title": "Brel", "text": "founded by a sailor"},
    {"id": "é-3", "text": " ".join(["words"] * 40)},
    {"id": "d1", "text": ""},
]


def ids_of(tokenizer, text):
    return tokenizer(text, add_special_tokens=False)["input_ids"]


@pytest.fixture
def built(tmp_path):
    write_documents(tmp_path / "docs.jsonl", DOCS)
    meta = build_token_store(tmp_path / "docs.jsonl", tmp_path / "store", OFFLINE, cap=16, progress=False)
    with TokenStore(tmp_path / "store") as store:
        yield store, meta


def test_ids_are_the_tokenizers_without_special_tokens_title_joined_and_capped(built, tokenizer):
    store, meta = built
    numbers = store.numbers(["d10", "d2", "é-3", "d1"])
    assert store.ids(numbers[0]).tolist() == ids_of(tokenizer, DOCS[0]["text"])
    assert store.ids(numbers[1]).tolist() == ids_of(tokenizer, "Brel founded by a sailor")
    assert store.ids(numbers[2]).tolist() == ids_of(tokenizer, DOCS[2]["text"])[:16]  # capped
    assert store.ids(numbers[2], limit=5).tolist() == ids_of(tokenizer, DOCS[2]["text"])[:5]
    assert store.ids(numbers[3]).tolist() == []
    assert store.ids(numbers[0]).dtype == np.int32
    # lengths are counted before the cap, counts after it
    assert store.lengths[numbers[2]] == 40 and store.counts[numbers[2]] == 16
    assert meta["documents"] == 4 and meta["cap"] == 16 and meta["full_tokens"] > meta["stored_tokens"]


def test_numbers_follow_doc_id_order_and_unknown_ids_are_found_missing(built):
    store, _ = built
    numbers = store.find(["d1", "d10", "d2", "é-3", "nope", "a-much-longer-id-than-any-key", ""])
    assert numbers[:4].tolist() == [0, 1, 2, 3]  # "d1" < "d10" < "d2" < "é-3", as Python sorts str
    assert numbers[4:].tolist() == [-1, -1, -1]
    assert [store.doc_id(n) for n in range(len(store))] == sorted(doc["id"] for doc in DOCS)
    with pytest.raises(ValueError, match=r"2 candidate documents are not in the token store .*'nope'"):
        store.numbers(["d1", "nope", "zzz"], what="candidate documents")


def test_a_store_is_only_read_with_the_same_vocabulary_and_enough_tokens(built, tmp_path):
    from transformers import BertTokenizerFast

    store, _ = built
    (tmp_path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]))
    other = BertTokenizerFast(vocab_file=str(tmp_path / "vocab.txt"))
    with pytest.raises(ValueError, match="vocabulary differs"):
        store.check_tokenizer(other)
    from posbias.backbones import load_tokenizer

    store.check_tokenizer(load_tokenizer(OFFLINE), max_doc_tokens=16)
    with pytest.raises(ValueError, match="keeps 16 tokens per document, but the ranker reads 17"):
        store.check_tokenizer(load_tokenizer(OFFLINE), max_doc_tokens=17)


def test_bad_collections_and_missing_stores_are_clear_errors(tmp_path):
    write_documents(tmp_path / "twice.jsonl", [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}])
    with pytest.raises(ValueError, match="document 'a' appears twice"):
        build_token_store(tmp_path / "twice.jsonl", tmp_path / "store", OFFLINE, cap=None, progress=False)
    assert not (tmp_path / "store").exists()  # nothing half-written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["twice.jsonl"]  # no staging directory either
    with pytest.raises(InputError, match="no such token store"):
        TokenStore(tmp_path / "store")


def test_an_incomplete_or_damaged_store_is_refused_by_name(built, tmp_path):
    (tmp_path / "store" / "counts.npy").unlink()
    with pytest.raises(InputError, match=r"store is not a token store: counts\.npy missing"):
        TokenStore(tmp_path / "store")
    (tmp_path / "store" / "counts.npy").write_bytes(b"")
    (tmp_path / "store" / "meta.json").write_text('{"format": 1,\n')
    with pytest.raises(InputError, match=r"meta\.json:2: invalid JSON"):
        TokenStore(tmp_path / "store")


def test_meta_names_tokenizer_and_source(built, tmp_path):
    store, _ = built
    meta = json.loads((tmp_path / "store" / "meta.json").read_text())
    assert meta["tokenizer"] == OFFLINE and meta["source"].endswith("docs.jsonl")


def test_a_truncated_token_file_is_an_error_naming_the_document(built, tmp_path):
    store, _ = built
    last = max((n for n in range(len(store)) if store.counts[n] > 1), key=lambda n: int(store.starts[n]))
    with open(tmp_path / "store" / "tokens.bin", "r+b") as handle:
        handle.truncate((int(store.starts[last]) + 1) * 4)
    with pytest.raises(OSError, match=rf"read 4 of {int(store.counts[last]) * 4} bytes of document"):
        store.ids(last)


def test_a_store_the_disk_has_no_room_for_is_one_line_and_more_space_builds_the_same_store(tmp_path, small_disk):
    # 2000 one-token documents: tokens.bin (8 kB) fits on a 12 kB disk, then keys.npy (10 kB) does not
    write_documents(tmp_path / "docs.jsonl", [{"id": f"d{i}", "text": "a"} for i in range(2000)])
    disk = small_disk("12k")
    store = disk.root / "store"
    with pytest.raises(DiskFullError) as raised:
        build_token_store(tmp_path / "docs.jsonl", store, OFFLINE, cap=None, progress=False)
    written = re.fullmatch(rf"no space left on device writing {re.escape(str(store))}: needs more than the "
                           rf"([\d.]+) kB written before the disk filled, 12\.3 kB free on {re.escape(str(disk.root))}",
                           str(raised.value))
    assert written and float(written[1]) > 8.0  # it filled in an index array, whose writer must keep the errno
    assert os.listdir(disk.root) == []  # no store, no hidden staging directory

    disk.resize("1m")
    build_token_store(tmp_path / "docs.jsonl", store, OFFLINE, cap=None, progress=False)
    build_token_store(tmp_path / "docs.jsonl", tmp_path / "roomy", OFFLINE, cap=None, progress=False)
    assert all((store / name).read_bytes() == (tmp_path / "roomy" / name).read_bytes() for name in FILES)
    for name in (name for name in FILES if name.endswith(".npy")):  # the bytes np.save writes
        saved = io.BytesIO()
        np.save(saved, np.load(store / name))
        assert saved.getvalue() == (store / name).read_bytes(), name


def test_a_tokenizer_giving_the_same_ids_shares_the_stores_files_and_one_giving_others_does_not(tmp_path, tokenizer):
    """The session's MiniLM tokenizer under two names (as ELECTRA reads BERT's WordPiece under its own), and a
    cased copy of it, whose ids differ."""
    from transformers import AutoTokenizer

    write_documents(tmp_path / "docs.jsonl", [*DOCS, {"id": "d5", "text": "Zorvia Mendal"}])
    collection = tmp_path / "tokens"
    first = build_token_store(tmp_path / "docs.jsonl", collection / "minilm", OFFLINE, cap=16, progress=False)
    renamed, cased = tmp_path / "renamed", tmp_path / "cased"
    tokenizer.save_pretrained(renamed)
    AutoTokenizer.from_pretrained(renamed, do_lower_case=False).save_pretrained(cased)
    same = build_token_store(tmp_path / "docs.jsonl", collection / "renamed", str(renamed), cap=16, progress=False)
    other = build_token_store(tmp_path / "docs.jsonl", collection / "cased", str(cased), cap=16, progress=False)
    assert "shares_ids_with" not in first and "shares_ids_with" not in other
    assert same["shares_ids_with"] == "minilm"
    assert same["bytes_not_stored_again"] == sum((collection / "minilm" / name).stat().st_size
                                                 for name in ("tokens.bin", "keys.npy", "starts.npy", "counts.npy",
                                                              "lengths.npy"))
    for name in ("tokens.bin", "counts.npy"):
        assert os.stat(collection / "renamed" / name).st_ino == os.stat(collection / "minilm" / name).st_ino
        assert os.stat(collection / "cased" / name).st_ino != os.stat(collection / "minilm" / name).st_ino
    with TokenStore(collection / "renamed") as shared, TokenStore(collection / "minilm") as original:
        assert shared.meta["tokenizer"] == str(renamed)  # its own name, and its own tokenizer reads it
        shared.check_tokenizer(tokenizer)
        numbers = shared.find(["d5", "d10"])
        assert [shared.ids(n).tolist() for n in numbers] == [original.ids(n).tolist() for n in numbers]
