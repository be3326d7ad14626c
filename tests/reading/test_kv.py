import random
import re
import uuid

import pytest

from posbias.errors import InputError
from posbias.reading.kv import (generate_kv_examples, move_gold, read_kv_records, target_index, write_kv_examples,
                             write_kv_position_file)

UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def test_generation_is_seeded_and_the_first_examples_do_not_depend_on_the_count():
    a = generate_kv_examples(5, 20, seed=3)
    assert a == generate_kv_examples(5, 20, seed=3)
    assert generate_kv_examples(2, 20, seed=3) == a[:2]
    assert generate_kv_examples(5, 20, seed=4) != a


def test_generation_draws_uuids_as_specified():
    rng = random.Random(9)
    first_key = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    (example,) = generate_kv_examples(1, 3, seed=9)
    assert example["ordered_kv_records"][0][0] == first_key


def test_examples_have_the_authors_schema_and_no_string_twice():
    examples = generate_kv_examples(30, 40, seed=0)
    targets = set()
    for example in examples:
        assert set(example) == {"ordered_kv_records", "key", "value"}
        strings = [s for pair in example["ordered_kv_records"] for s in pair]
        assert len(strings) == 80 and len(set(strings)) == 80
        assert all(UUID4.fullmatch(s) for s in strings)
        targets.add(target_index(example))
    assert len(targets) > 10  # targets are spread over the positions


def test_short_keys_are_rejected_when_repeated():
    examples = generate_kv_examples(3, 50, seed=1, key_format="hex8")
    for example in examples:
        strings = [s for pair in example["ordered_kv_records"] for s in pair]
        assert all(re.fullmatch(r"[0-9a-f]{8}", s) for s in strings) and len(set(strings)) == 100


def test_generator_refuses_bad_settings():
    with pytest.raises(InputError, match="key_format"):
        generate_kv_examples(1, 5, 0, key_format="base64")
    with pytest.raises(InputError, match="n_pairs"):
        generate_kv_examples(1, 1, 0)


def test_move_gold_pops_and_inserts_keeping_the_others_in_order():
    pairs = [["k0", "v0"], ["k1", "v1"], ["k2", "v2"], ["k3", "v3"], ["k4", "v4"]]
    record = {"ordered_kv_records": pairs, "key": "k1", "value": "v1"}
    moved = move_gold(record, 3)
    assert moved["ordered_kv_records"] == [["k0", "v0"], ["k2", "v2"], ["k3", "v3"], ["k1", "v1"], ["k4", "v4"]]
    assert move_gold(record, 0)["ordered_kv_records"][0] == ["k1", "v1"]
    assert move_gold(record, 4)["ordered_kv_records"][-1] == ["k1", "v1"]
    assert record["ordered_kv_records"] == pairs and moved["key"] == "k1"  # the input is not changed
    for index in range(5):
        others = [p for p in move_gold(record, index)["ordered_kv_records"] if p[0] != "k1"]
        assert others == [p for p in pairs if p[0] != "k1"]
    with pytest.raises(InputError, match="outside"):
        move_gold(record, 5)


def test_files_round_trip_and_positions_are_materialised(tmp_path):
    source = tmp_path / "kv-retrieval-6_keys.jsonl.gz"
    assert write_kv_examples(source, 4, 6, seed=2) == 4
    records = read_kv_records(source)
    assert records == generate_kv_examples(4, 6, seed=2)
    out = tmp_path / "6keys" / "gold_at_5.jsonl.gz"
    assert write_kv_position_file(source, out, 5, limit=3) == 3
    assert [target_index(r) for r in read_kv_records(out)] == [5, 5, 5]


@pytest.mark.parametrize("record, message", [
    ({"ordered_kv_records": [["a", "1"], ["b", "2"]], "key": "a", "value": "2"}, "not in ordered_kv_records"),
    ({"ordered_kv_records": [["a", "1"], ["a", "2"]], "key": "a", "value": "1"}, "repeats the key 'a'"),
    ({"ordered_kv_records": [["a", "1"], ["b"]], "key": "a", "value": "1"}, r"ordered_kv_records\[1\]"),
    ({"ordered_kv_records": [["a", "1"], ["b", "2"]], "value": "1"}, '"key"'),
])
def test_bad_kv_records_name_the_file_and_line(tmp_path, write_gz, record, message):
    good = {"ordered_kv_records": [["x", "1"], ["y", "2"]], "key": "x", "value": "1"}
    path = write_gz(tmp_path / "kv.jsonl.gz", [good, record])
    with pytest.raises(InputError, match=rf"kv\.jsonl\.gz:2: .*{message}"):
        read_kv_records(path)
