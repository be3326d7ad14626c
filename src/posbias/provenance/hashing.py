"""Hashes: `config_hash(data)`, sha256 of the canonical JSON of a validated config (key order and number
spelling do not change it; any value does), and `content_hash(path)`, a file's or directory's content hash
(pretrained weights), cached per machine under the posbias cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from posbias.io import atomic_write
from posbias.staging.checksums import hashed_files, sha256_file, tree_sha256  # a directory's hash, as stage's

log = logging.getLogger(__name__)

# Pretrained weights up to this size get a content hash (cached per machine); larger directories a fingerprint
# of config.json and their files' names and sizes.
CONTENT_HASH_MAX_BYTES = 2 * 2**30


# --- config ----------------------------------------------------------------------------------------------


def config_hash(data: Any) -> str:
    """sha256 of the canonical JSON of `data` (a validated config, or one job's slice of it): sorted keys and
    integral floats as ints (`posbias.config.canonical`), so only a changed value changes it."""
    from posbias.config import canonical

    text = json.dumps(canonical(data), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- pretrained weights ----------------------------------------------------------------------------------


def _hash_cache_file() -> Path:
    from posbias.backbones import cache_dir

    return cache_dir() / "content-hashes.json"


def _read_hash_cache() -> dict:
    try:
        cache = json.loads(_hash_cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return cache if isinstance(cache, dict) else {}


def content_hash(path: str | os.PathLike) -> dict:
    """A file's sha256, or a directory's: sha256 over its files' relative names and sha256s, in name order.

    Cached per machine under the posbias cache, keyed by the path and its files' names, sizes and modification
    times, so a backbone is read once, not by every job. A directory over `CONTENT_HASH_MAX_BYTES` gets a
    `fingerprint` instead (config.json and its files' names and sizes), and says so in `method`."""
    path = Path(path).resolve()
    files = hashed_files(path)
    stats = [(str(f.relative_to(path)) if f != path else f.name, f.stat()) for f in files]
    signature = hashlib.sha256(json.dumps([(name, s.st_size, s.st_mtime_ns) for name, s in stats]).encode()).hexdigest()
    cache = _read_hash_cache()
    cached = cache.get(str(path))
    if isinstance(cached, dict) and cached.get("signature") == signature:
        return {"method": cached["method"], "sha256": cached["sha256"]}
    total = sum(s.st_size for _, s in stats)
    if path.is_dir() and total > CONTENT_HASH_MAX_BYTES:
        method = "fingerprint"
        digest = hashlib.sha256((path / "config.json").read_bytes() if (path / "config.json").is_file() else b"")
        for name, stat in stats:
            digest.update(f"\n{name}\t{stat.st_size}".encode("utf-8"))
        value = digest.hexdigest()
    elif path.is_file():
        method, value = "sha256", sha256_file(path)
    else:
        method, value = "sha256", tree_sha256(path)
    cache = _read_hash_cache()  # again: another job may have added entries meanwhile
    cache[str(path)] = {"signature": signature, "method": method, "sha256": value}
    try:
        with atomic_write(_hash_cache_file()) as out:
            json.dump(cache, out, indent=1, sort_keys=True)
    except OSError as err:  # a read-only cache costs only speed
        log.warning("cannot cache content hashes in %s: %s", _hash_cache_file(), err)
    return {"method": method, "sha256": value}
