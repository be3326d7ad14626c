"""The response cache: every answer a model gave, keyed by everything that decides it.

A key is the sha256 of the canonical JSON of the backend, the model, its revision (or the local weights'
fingerprint), the wrapper, exactly what was sent, the decoding settings and the API version where there is
one; so a changed template byte or decoding setting never replays an old answer.

Storage: one append-only JSONL file per model under the cache directory, one entry a line. Parallel jobs on
one machine append safely: each append holds an exclusive `flock` on a lock file, writes the whole line in one
write and fsyncs it; a reader only takes lines that end in a newline and skips lines that are not JSON (a job
killed mid-write, or a disk that filled: a `DiskFullError` naming the file), so a torn line is never read as an
answer. A lookup that misses first reads what other processes appended since. Entries hold no API key and no
environment: the fields listed in `ENTRY` and the other key fields.

Modes: `read_write` (default), `read_only` (a miss is a `CacheMiss`: replaying recorded answers must never
call a model or pay for an API), `off` (neither read nor write).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
from pathlib import Path
from typing import Iterable, Mapping

from posbias.errors import InputError
from posbias.disk_space import full_disk_reported

log = logging.getLogger(__name__)

MODES = ("read_write", "read_only", "off")
# The fields every entry has (a line is canonical JSON: keys sorted).
ENTRY = ("key", "backend", "model", "revision", "wrapper", "sent", "decoding", "text", "finish_reason",
         "prompt_tokens", "completion_tokens", "latency_s", "created_at", "sdk")


def canonical_json(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_key(fields: Mapping) -> str:
    """The sha256 hex digest of the canonical JSON of the key fields."""
    return hashlib.sha256(canonical_json(dict(fields)).encode("utf-8")).hexdigest()


class CacheMiss(InputError):
    """Answers a `read_only` cache does not hold."""

    SHOWN = 5

    def __init__(self, keys: Iterable[str], directory: str | os.PathLike):
        self.keys = list(keys)
        self.directory = str(directory)
        shown = ", ".join(self.keys[:self.SHOWN])
        more = f" and {len(self.keys) - self.SHOWN} more" if len(self.keys) > self.SHOWN else ""
        super().__init__(f"the response cache {self.directory} (mode read_only) lacks {len(self.keys)} "
                         f"answer(s): {shown}{more}; run with cache mode read_write to compute them")


def model_file_name(model: str) -> str:
    """A filesystem-safe name for a model's file: a readable slug plus a short hash (slugs can collide)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("._")[:80] or "model"
    return f"{slug}-{hashlib.sha256(model.encode('utf-8')).hexdigest()[:8]}.jsonl"


class _ModelFile:
    """The entries of one model's file, read incrementally from where the last read stopped."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0  # bytes read so far, always at the end of a complete line
        self.entries: dict[str, dict] = {}

    def refresh(self) -> None:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except FileNotFoundError:
            return
        end = data.rfind(b"\n") + 1  # a last line without its newline is still being written, or torn
        for raw in data[:end].splitlines():
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw)
                key = entry["key"]
            except (ValueError, TypeError, KeyError):  # a torn line that a later append closed off
                log.warning("%s: skipping an unreadable line (a job killed while writing it)", self.path)
                continue
            self.entries.setdefault(key, entry)  # the first answer recorded stays the answer
        self.offset += end


class ResponseCache:
    """Cached answers under `directory`, used in `mode` (`read_write`, `read_only` or `off`)."""

    def __init__(self, directory: str | os.PathLike, mode: str = "read_write"):
        if mode not in MODES:
            raise InputError(f"response cache mode {mode!r} is not one of {', '.join(MODES)}")
        self.directory = Path(directory)
        self.mode = mode
        self._files: dict[str, _ModelFile] = {}

    @property
    def reads(self) -> bool:
        return self.mode != "off"

    @property
    def writes(self) -> bool:
        return self.mode == "read_write"

    def path(self, model: str) -> Path:
        return self.directory / model_file_name(model)

    def _file(self, model: str) -> _ModelFile:
        if model not in self._files:
            self._files[model] = _ModelFile(self.path(model))
            self._files[model].refresh()
        return self._files[model]

    def get(self, model: str, key: str) -> dict | None:
        """The entry recorded for `key`, or None (always None in mode `off`)."""
        if not self.reads:
            return None
        file = self._file(model)
        if key not in file.entries:
            file.refresh()  # another job may have recorded it since
        return file.entries.get(key)

    def put(self, entry: Mapping) -> None:
        """Append one answer to its model's file; only in mode `read_write`. `entry` has the fields of
        `ENTRY` and may have more key fields (a local model's dtype, an API version), kept too."""
        if not self.writes:
            return
        record = {name: entry[name] for name in ENTRY}
        record.update((name, value) for name, value in entry.items() if name not in record)
        line = (canonical_json(record) + "\n").encode("utf-8")
        path = self.path(record["model"])
        with full_disk_reported(path, needs=len(line)):
            self.directory.mkdir(parents=True, exist_ok=True)
            with open(path.with_name(path.name + ".lock"), "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                try:
                    _append(path, line)
                finally:
                    fcntl.flock(lock, fcntl.LOCK_UN)
        file = self._files.get(record["model"])
        if file is not None:
            file.entries.setdefault(record["key"], record)


def _append(path: Path, line: bytes) -> None:
    """Write `line` at the end of `path` in one write, under the caller's lock, and fsync it."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        size = os.fstat(fd).st_size
        if size:
            with open(path, "rb") as handle:  # a job killed mid-write left a line without its newline:
                handle.seek(size - 1)  # end it, so the torn line stays unreadable and ours stays whole
                if handle.read(1) != b"\n":
                    line = b"\n" + line
        view = memoryview(line)
        while view:  # one write for a regular file; the loop only guards against a short write
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
