"""The synthetic key-value retrieval data (spec §1.3, §2.4): JSON objects of n random UUID pairs, one of which
is asked for.

Records keep the authors' schema: `{"ordered_kv_records": [[key, value], ...], "key": ..., "value": ...}`.

- The authors' generator is unseeded (`uuid4`, `random.choice`), so their files cannot be regenerated (quirk 6).
  Fixed: `generate_kv_examples` draws everything from `random.Random(seed)`, each UUID as
  `uuid.UUID(int=rng.getrandbits(128), version=4)`, rejects any string already in the example (no key or value
  twice) and picks the target with `rng.randrange(n)`. Examples are drawn in order, so the first N examples are
  the same whatever `n_examples` is. `key_format: hex8` shortens keys and values to their first 8 hex digits,
  for small models (spec §7.2).
- The target is moved to a gold index as in every KV script of the authors: popped from where it is and
  inserted with `list.insert`; all other pairs keep their order (`move_gold`). Unlike `list.insert`, an index
  outside the pairs is refused instead of silently clamped.
"""

from __future__ import annotations

import copy
import os
import random
import uuid
from typing import Iterator, Mapping

from posbias.errors import InputError
from posbias.io import FormatError, json_objects, nonempty, write_jsonl

KEY_FORMATS = ("uuid", "hex8")


def _draw(rng: random.Random, key_format: str) -> str:
    text = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    return text if key_format == "uuid" else text[:8]


def generate_kv_example(rng: random.Random, n_pairs: int, key_format: str = "uuid") -> dict:
    """One example of `n_pairs` pairs drawn from `rng`; no string occurs twice in it."""
    seen: set[str] = set()
    pairs = []
    while len(pairs) < n_pairs:
        key, value = _draw(rng, key_format), _draw(rng, key_format)
        if key in seen or value in seen or key == value:
            continue
        seen.update((key, value))
        pairs.append([key, value])
    key, value = pairs[rng.randrange(n_pairs)]
    return {"ordered_kv_records": pairs, "key": key, "value": value}


def generate_kv_examples(n_examples: int, n_pairs: int, seed: int, key_format: str = "uuid") -> list[dict]:
    """`n_examples` examples of `n_pairs` pairs each, all drawn from `random.Random(seed)`."""
    if key_format not in KEY_FORMATS:
        raise InputError(f"key_format must be one of {KEY_FORMATS}, got {key_format!r}")
    if not isinstance(n_pairs, int) or n_pairs < 2:
        raise InputError(f"n_pairs must be an integer >= 2 (a prompt needs two pairs), got {n_pairs!r}")
    if not isinstance(n_examples, int) or n_examples < 1:
        raise InputError(f"n_examples must be a positive integer, got {n_examples!r}")
    rng = random.Random(seed)
    return [generate_kv_example(rng, n_pairs, key_format) for _ in range(n_examples)]


def check_kv_record(record: Mapping) -> None:
    """Raise an `InputError` naming the first field of a KV record that cannot be used."""
    pairs = record.get("ordered_kv_records")
    if not isinstance(pairs, list) or len(pairs) < 2:
        raise InputError('"ordered_kv_records" must be a list of at least 2 [key, value] pairs')
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(s, str) and s for s in pair)):
            raise InputError(f"ordered_kv_records[{i}] must be a [key, value] pair of non-empty strings, not {pair!r}")
    for field in ("key", "value"):
        if not isinstance(record.get(field), str) or not record[field]:
            raise InputError(f'"{field}" must be a non-empty string, not {record.get(field)!r}')
    keys = [pair[0] for pair in pairs]
    if len(set(keys)) != len(keys):
        duplicate = next(k for k in keys if keys.count(k) > 1)
        raise InputError(f"ordered_kv_records repeats the key {duplicate!r}")
    if [record["key"], record["value"]] not in pairs:
        raise InputError(f"the target pair [{record['key']!r}, {record['value']!r}] is not in ordered_kv_records")


def kv_records(path: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """`(line number, record)` for each checked record of a KV file (the authors' or ours)."""
    for line_no, record in json_objects(path):
        try:
            check_kv_record(record)
        except InputError as err:
            raise FormatError(path, line_no, str(err)) from None
        yield line_no, record


def read_kv_records(path: str | os.PathLike, limit: int | None = None) -> list[dict]:
    records = []
    for _, record in kv_records(path):
        if limit is not None and len(records) >= limit:
            break
        records.append(record)
    return nonempty(records, path, "key-value examples")


def target_index(record: Mapping) -> int:
    """Where the target pair is in `ordered_kv_records`."""
    return record["ordered_kv_records"].index([record["key"], record["value"]])


def move_gold(record: Mapping, index: int) -> dict:
    """The record with its target pair moved to `index` (pop, then insert); the other pairs keep their order."""
    pairs = copy.deepcopy(list(record["ordered_kv_records"]))
    if not 0 <= index < len(pairs):
        raise InputError(f"gold index {index} is outside 0..{len(pairs) - 1} for {len(pairs)} pairs")
    pairs.insert(index, pairs.pop(target_index(record)))
    return {**copy.deepcopy(dict(record)), "ordered_kv_records": pairs}


def write_kv_position_file(source: str | os.PathLike, out: str | os.PathLike, gold_index: int,
                           limit: int | None = None) -> int:
    """Materialise one position: every example of `source` (the first `limit`) with its target at `gold_index`."""
    moved = []
    for line_no, record in kv_records(source):
        if limit is not None and len(moved) >= limit:
            break
        try:
            moved.append(move_gold(record, gold_index))
        except InputError as err:
            raise FormatError(source, line_no, str(err)) from None
    return write_jsonl(out, nonempty(moved, source, "key-value examples"))


def write_kv_examples(path: str | os.PathLike, n_examples: int, n_pairs: int, seed: int,
                      key_format: str = "uuid") -> int:
    """Generate and write one KV file (targets where the generator put them; `write_kv_position_file` moves
    them); returns the number of examples."""
    return write_jsonl(path, generate_kv_examples(n_examples, n_pairs, seed, key_format))
