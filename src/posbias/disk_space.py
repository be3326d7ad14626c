"""A write that finds no space left, as one line: the output it was writing, the space it needed, the space free.

Libraries report a full disk in their own ways: an `OSError` with errno ENOSPC (or EDQUOT, a full quota), a
`RuntimeError` from torch.save wrapping one, or only a message (safetensors' Rust "(os error 28)", FAISS).
`full_disk_reported` wraps a writer, recognises them all and raises `posbias.errors.DiskFullError`, so the
command line and a workflow job end in one line with exit status 4 (`posbias.errors`). The atomic writers of
`posbias.io` use it, and so does every other writer of the pipeline.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import shutil
from pathlib import Path

from posbias.errors import DiskFullError

# The error numbers of a write that found no space: the file system's, or the user's quota.
_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
# How libraries that drop the errno still say so: its text ("No space left on device"), or Rust's "(os error 28)"
# (safetensors' SafetensorError, FAISS's RuntimeError).
_NO_SPACE_TEXTS = tuple(text for code in _NO_SPACE for text in (os.strerror(code), f"(os error {code})"))


def _no_space(err: BaseException) -> bool:
    """Whether `err`, or an error it was raised from or while handling (torch.save's RuntimeError wraps the
    OSError of the file it writes), says the disk or the quota is full."""
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, OSError) and err.errno in _NO_SPACE:
            return True
        if any(text in str(err) for text in _NO_SPACE_TEXTS):
            return True
        err = err.__cause__ or err.__context__
    return False


@dataclasses.dataclass
class _Write:
    """A write in progress under `full_disk_reported`."""

    staging: Path | None = None  # the hidden temporary it fills, if any: measured and removed if the write fails


@contextlib.contextmanager
def full_disk_reported(path: str | os.PathLike, needs: int | None = None):
    """Run a write of the output `path`; a failure for lack of space (the disk's or the quota's) becomes a
    `DiskFullError` whose message names `path`, the bytes it `needs` (when the caller knows; else those written
    before the disk filled) and the space free on its file system.

    Yields a record whose `staging` a writer sets to the hidden temporary it writes: whatever ends the write
    early removes it (atomic writers leave nothing behind). A `DiskFullError` from a write nested inside passes
    unchanged: the innermost writer knows best what it wrote.
    """
    write = _Write()
    try:
        yield write
    except BaseException as err:
        full = isinstance(err, Exception) and not isinstance(err, DiskFullError) and _no_space(err)
        written = _bytes_under(write.staging) if full and needs is None and write.staging else 0
        if write.staging:
            _discard(write.staging)
        if full:  # the free space is measured after the temporary went: what a rerun would have
            raise DiskFullError(_no_space_message(path, needs, written)) from err
        raise


def _bytes_under(path: Path) -> int:
    """The bytes of a file, or of every file in a directory tree."""
    if not path.is_dir():
        return path.stat().st_size if path.exists() else 0
    return sum(os.lstat(os.path.join(folder, name)).st_size for folder, _, names in os.walk(path) for name in names)


def _discard(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _no_space_message(path: str | os.PathLike, needs: int | None, written: int) -> str:
    """`no space left on device writing <path>: needs about 1.3 GB, 200.0 MB free on /scratch`."""
    existing = Path(os.path.abspath(path))
    while not existing.exists():  # the nearest folder that exists: the output's file system
        existing = existing.parent
    mount = existing
    while not os.path.ismount(mount):
        mount = mount.parent
    free = f"{_size(shutil.disk_usage(existing).free)} free on {mount}"
    if needs is not None:
        return f"no space left on device writing {path}: needs about {_size(needs)}, {free}"
    if written:
        return f"no space left on device writing {path}: needs more than the {_size(written)} written before the " \
               f"disk filled, {free}"
    return f"no space left on device writing {path}: {free}"


def _size(n_bytes: int) -> str:
    """Bytes as people read them: `812 bytes`, `4.7 MB`, `1.3 GB` (powers of 1000, as df -H)."""
    if n_bytes < 1000:
        return f"{n_bytes} bytes"
    for unit in ("kB", "MB", "GB", "TB"):
        n_bytes /= 1000
        if n_bytes < 1000 or unit == "TB":
            return f"{n_bytes:.1f} {unit}"
