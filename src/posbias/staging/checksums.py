"""The sha256 of an input placed by hand, checked against the one its config keeps beside its path.

Nothing else vouches for these files: ir_datasets checks the MD5 of what it downloads, but the doc2query expansions,
the Re-DocRED files, the Lost-in-the-Middle NQ-open file and the TREC Disks 4 and 5 that ir_datasets reads from a
copy are whatever was put there. A config keeps each one's sha256 beside its path (`expansions_sha256`, `sha256`,
`qa_sha256`, `manual_sha256`); `posbias stage` checks it, prints the hash of a file that has none so that it can be
added, and the job that reads the file checks it again, so that a run without a stage refuses a wrong file too.
A directory's hash is over its files' names and hashes (`tree_sha256`, which the provenance manifest gives a
backbone directory too).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from posbias.errors import InputError


def sha256_file(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def hashed_files(path: Path) -> list[Path]:
    """The files a hash of `path` covers: itself, or a directory's files in name order, caches left out."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file()
                  and not {"__pycache__", ".cache"} & set(p.relative_to(path).parts[:-1]))


def tree_sha256(path: str | os.PathLike) -> str:
    """A directory's sha256: over one `name<TAB>sha256` line per file (its name relative to `path`), in name
    order."""
    path = Path(path)
    digest = hashlib.sha256()
    for file in hashed_files(path):
        digest.update(f"{file.relative_to(path)}\t{sha256_file(file)}\n".encode("utf-8"))
    return digest.hexdigest()


def sha256_of(path: str | os.PathLike) -> str:
    return tree_sha256(path) if Path(path).is_dir() else sha256_file(path)


class ChecksumError(InputError):
    """A file placed by hand is not the one its config names by sha256."""


def mismatch(path: str | os.PathLike, expected: str, found: str, key: str) -> ChecksumError:
    return ChecksumError(f"{path}: sha256 {found} is not the {expected.lower()} that {key} expects (another "
                         f"version of the file, or a damaged copy)")


def verify(path: str | os.PathLike, expected: str | None, key: str) -> None:
    """Refuse `path` when its sha256 is not `expected` (the config's `key`); nothing to check without one. A
    missing file is left to the reader, whose error says what the file is."""
    if not expected or not Path(path).exists():
        return
    found = sha256_of(path)
    if found != expected.lower():
        raise mismatch(path, expected, found, key)
