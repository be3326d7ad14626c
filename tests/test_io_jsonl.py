import gzip

import pytest

from posbias.io import json_objects, write_jsonl


def test_gzip_output_is_reproducible_and_reads_back(tmp_path):
    records = [{"question": "q", "answers": ["Ö"]}, {"n": 2}]
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "sub" / "b.jsonl.gz"
    assert write_jsonl(a, records) == 2 and write_jsonl(b, records) == 2
    assert a.read_bytes() == b.read_bytes()
    assert gzip.decompress(a.read_bytes()).decode() == '{"question": "q", "answers": ["Ö"]}\n{"n": 2}\n'
    assert [record for _, record in json_objects(a)] == records
    plain = tmp_path / "c.jsonl"
    write_jsonl(plain, records)
    assert plain.read_text(encoding="utf-8").count("\n") == 2


def test_a_failed_write_leaves_nothing_behind(tmp_path):
    def records():
        yield {"n": 1}
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_jsonl(tmp_path / "out.jsonl.gz", records())
    assert list(tmp_path.iterdir()) == []
