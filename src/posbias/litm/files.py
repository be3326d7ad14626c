"""The stage's JSONL files (`.jsonl` or `.jsonl.gz`, as the authors ship theirs): read with line numbers, so
that every complaint names `path:line`, and written atomically with reproducible bytes (a gzip header holds
a timestamp and a file name; both are left out, so the same records give the same file)."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from posbias.io import atomic_write, json_objects


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """`(line number, object)` for each line; a line that is not a JSON object is a `FormatError`."""
    return json_objects(path)


def write_jsonl(path: str | os.PathLike, records: Iterable[Mapping]) -> int:
    """Write records one per line, gzipped when the name ends in `.gz`; returns how many were written."""
    count = 0
    with atomic_write(path, "wb") as raw:
        # GzipFile.close() writes the trailer and leaves `raw` open for atomic_write to sync and rename.
        with (gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) if Path(path).suffix == ".gz"
              else contextlib.nullcontext(raw)) as out:
            for count, record in enumerate(records, start=1):
                out.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
    return count
