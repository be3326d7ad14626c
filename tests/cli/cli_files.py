"""Small input files of the command-line tests, in the real formats."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
RUN = "q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 1.0 t\nq2 Q0 d3 1 3.0 t\n"
QUERIES = "q1\tcapital of zorvia\nq2\ttallest mountain\n"
DOCS = '{"id": "d1", "text": "the capital of zorvia is mendal"}\n{"id": "d2", "text": "green hills"}\n'

OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def write(path: Path, content: str | bytes) -> str:
    """Write text or bytes to `path`, compressed as its suffix says; returns the path as a string."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    with OPENERS.get(path.suffix, open)(path, "wb") as handle:
        handle.write(data)
    return str(path)


def listing(directory: Path) -> list[str]:
    """Every name in `directory`, hidden ones too: a failed command must leave no (staging) output."""
    return sorted(p.name for p in directory.iterdir())
