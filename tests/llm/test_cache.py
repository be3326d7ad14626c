"""The response cache: keys, modes, appends from parallel processes, torn lines, a disk that fills."""

from __future__ import annotations

import json
import multiprocessing
import re

import pytest

from posbias.errors import DiskFullError, InputError
from posbias.llm.cache import ENTRY, CacheMiss, ResponseCache, cache_key, model_file_name
from posbias.llm.types import Decoding

FIELDS = {"backend": "hf_causal", "model": "org/model", "revision": "r1", "wrapper": "vicuna",
          "sent": "USER: hi ASSISTANT:", "decoding": Decoding().as_dict()}


def entry(key: str, text: str = "an answer", model: str = "org/model") -> dict:
    return {**FIELDS, "model": model, "key": key, "text": text, "finish_reason": "stop", "prompt_tokens": 3,
            "completion_tokens": 2, "latency_s": 0.5, "created_at": "2024-01-01T00:00:00+00:00",
            "sdk": {"name": "transformers", "version": "0"}}


def test_key_is_the_sha256_of_canonical_json():
    import hashlib

    canonical = json.dumps(FIELDS, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert cache_key(FIELDS) == hashlib.sha256(canonical.encode()).hexdigest()
    assert cache_key(dict(reversed(list(FIELDS.items())))) == cache_key(FIELDS)  # key order does not matter


@pytest.mark.parametrize("change", [dict(max_new_tokens=101), dict(temperature=0.5), dict(top_p=0.9),
                                    dict(stop=("\n",)), dict(seed=1)])
def test_every_decoding_field_changes_the_key(change):
    assert cache_key({**FIELDS, "decoding": Decoding(**change).as_dict()}) != cache_key(FIELDS)


@pytest.mark.parametrize("field", ["backend", "model", "revision", "wrapper", "sent"])
def test_every_identity_field_changes_the_key(field):
    assert cache_key({**FIELDS, field: FIELDS[field] + " "}) != cache_key(FIELDS)


def test_one_template_byte_changes_the_key():
    assert cache_key({**FIELDS, "sent": "USER: hi ASSISTANT: "}) != cache_key(FIELDS)
    assert cache_key({**FIELDS, "sent": [{"role": "user", "content": "hi"}]}) != \
        cache_key({**FIELDS, "sent": [{"role": "user", "content": "hi."}]})


def test_hit_after_put_and_in_a_new_cache(tmp_path):
    cache = ResponseCache(tmp_path)
    assert cache.get("org/model", "k1") is None
    cache.put(entry("k1", "first"))
    assert cache.get("org/model", "k1")["text"] == "first"
    assert ResponseCache(tmp_path, "read_only").get("org/model", "k1")["text"] == "first"
    assert ResponseCache(tmp_path, "read_only").get("other/model", "k1") is None  # one file per model
    lines = (tmp_path / model_file_name("org/model")).read_text().splitlines()
    assert len(lines) == 1 and set(ENTRY) <= set(json.loads(lines[0]))


def test_file_names_are_safe_and_distinct():
    names = {model_file_name(m) for m in ["org/model", "org_model", "/abs/dir/model", "offline:Smol LM"]}
    assert len(names) == 4
    assert all("/" not in name and " " not in name and ":" not in name for name in names)


def test_off_neither_reads_nor_writes(tmp_path):
    ResponseCache(tmp_path).put(entry("k1"))
    off = ResponseCache(tmp_path / "off", "off")
    off.put(entry("k2"))
    assert not (tmp_path / "off").exists()
    assert ResponseCache(tmp_path, "off").get("org/model", "k1") is None


def test_read_only_never_writes(tmp_path):
    ResponseCache(tmp_path, "read_only").put(entry("k1"))
    assert list(tmp_path.iterdir()) == []


def test_unknown_mode(tmp_path):
    with pytest.raises(InputError, match="'write'.*read_write, read_only, off"):
        ResponseCache(tmp_path, "write")


def test_cache_miss_lists_the_first_keys_and_the_directory(tmp_path):
    err = CacheMiss([f"key{i}" for i in range(8)], tmp_path)
    assert isinstance(err, InputError)
    assert "key0, key1, key2, key3, key4 and 3 more" in str(err) and str(tmp_path) in str(err)
    assert "8 answer" in str(err) and err.keys[-1] == "key7"


def test_a_miss_rereads_what_other_processes_appended(tmp_path):
    reader = ResponseCache(tmp_path)
    assert reader.get("org/model", "k1") is None  # the file is loaded (absent) now
    ResponseCache(tmp_path).put(entry("k1", "from another job"))
    assert reader.get("org/model", "k1")["text"] == "from another job"


def test_a_torn_last_line_is_ignored_and_closed_off(tmp_path):
    ResponseCache(tmp_path).put(entry("k1"))
    path = tmp_path / model_file_name("org/model")
    with open(path, "a") as handle:  # a job killed in the middle of a write
        handle.write(json.dumps(entry("k2"))[:40])
    assert ResponseCache(tmp_path).get("org/model", "k2") is None
    assert ResponseCache(tmp_path).get("org/model", "k1") is not None
    ResponseCache(tmp_path).put(entry("k3"))  # ends the torn line first, so k3's line stays whole
    fresh = ResponseCache(tmp_path)
    assert fresh.get("org/model", "k3") is not None and fresh.get("org/model", "k2") is None
    assert len(path.read_text().splitlines()) == 3


def test_an_answer_the_disk_has_no_room_for_is_one_line_naming_the_file_and_never_read(small_disk):
    disk = small_disk("1m")
    ResponseCache(disk.root).put(entry("k1"))
    path = disk.root / model_file_name("org/model")
    with pytest.raises(DiskFullError, match=rf"^no space left on device writing {re.escape(str(path))}: needs about "
                                            rf"2\.0 MB, [\d.]+ (bytes|kB|MB) free on {re.escape(str(disk.root))}$"):
        ResponseCache(disk.root).put(entry("k2", "x" * 2_000_000))
    assert path.stat().st_size > 500_000  # the part that fitted is on disk: a torn line
    assert ResponseCache(disk.root).get("org/model", "k2") is None
    disk.resize("8m")
    ResponseCache(disk.root).put(entry("k3"))
    fresh = ResponseCache(disk.root)
    assert fresh.get("org/model", "k1") is not None and fresh.get("org/model", "k3") is not None
    assert fresh.get("org/model", "k2") is None


def test_first_answer_recorded_stays_the_answer(tmp_path):
    ResponseCache(tmp_path).put(entry("k1", "first"))
    ResponseCache(tmp_path).put(entry("k1", "second"))
    assert ResponseCache(tmp_path).get("org/model", "k1")["text"] == "first"


def _append_many(directory: str, worker: int, count: int) -> None:
    cache = ResponseCache(directory)
    for i in range(count):
        cache.put(entry(f"w{worker}-{i}", "x" * 5000))  # long lines: a torn write would show


def test_parallel_appends_all_survive(tmp_path):
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_append_many, args=(str(tmp_path), w, 25)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(60)
        assert process.exitcode == 0
    lines = (tmp_path / model_file_name("org/model")).read_text().splitlines()
    assert len(lines) == 100 and all(json.loads(line)["text"] == "x" * 5000 for line in lines)
    cache = ResponseCache(tmp_path, "read_only")
    assert all(cache.get("org/model", f"w{w}-{i}") for w in range(4) for i in range(25))
