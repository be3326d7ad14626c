"""Small data in the real formats: a hand-written retrieval-results fixture (four NQ-like questions) and a
helper that writes records as the authors ship them (`.jsonl.gz`)."""

import gzip
import json
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "data" / "retrieval.jsonl"


def write_gz(path, records) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as out:
        for record in records:
            out.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
    return Path(path)


def read_gz(path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.fixture(name="write_gz")
def write_gz_fixture():
    """`write_gz(path, records)`: records (or raw lines) into a gzipped JSONL file."""
    return write_gz


@pytest.fixture(name="read_gz")
def read_gz_fixture():
    return read_gz


@pytest.fixture
def retrieval_records() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def retrieval_file(tmp_path, retrieval_records) -> Path:
    return write_gz(tmp_path / "retrieved.jsonl.gz", retrieval_records)
