"""A long job's resumable work in progress, kept in a `.partial` sibling of its output directory.

Snakemake deletes the declared outputs of a job before it runs and after it fails, so what a killed job has done
lives beside its output, in `<output>.partial/`, which no rule declares. Its `progress.json` records the rows
done and a fingerprint of the job's inputs and settings, and is replaced atomically after the data it counts is
on disk: a kill leaves a record that is never ahead of the data. A record with another fingerprint (other inputs
or settings) is discarded with everything beside it. Finished, the files move into the output directory, which
appears in one rename (`finish`), and the `.partial` directory goes.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Iterable

from posbias.io import atomic_directory, atomic_write

log = logging.getLogger(__name__)

PROGRESS_FILE = "progress.json"


def file_identity(path: str | os.PathLike) -> dict:
    """Size and modification time: a rewritten input (Snakemake reran its job) is a different input."""
    stat = os.stat(path)
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


class PartialOutput:
    """The work in progress of a job writing the directory `output`."""

    def __init__(self, output: str | os.PathLike, fingerprint: str):
        self.output = Path(output)
        self.directory = Path(f"{output}.partial")
        self.fingerprint = fingerprint

    def start(self) -> dict:
        """The progress a previous session of the same job recorded (`rows` done, and what it saved beside), or
        `{"rows": 0}` with an empty directory when there is none to resume."""
        record = self._record()
        if record is not None and record.get("fingerprint") == self.fingerprint:
            log.info("resuming from %s: %d rows done", self.directory, record["rows"])
            return record
        if self.directory.exists():
            log.info("discarding %s: %s", self.directory,
                     "made from other inputs or settings" if record else "no progress recorded")
            shutil.rmtree(self.directory)
        self.directory.mkdir(parents=True)
        return {"rows": 0}

    def save(self, rows: int, **extra) -> None:
        """Record `rows` as done; call only once the data they stand for is on disk."""
        with atomic_write(self.directory / PROGRESS_FILE) as out:
            json.dump({"fingerprint": self.fingerprint, "rows": rows, **extra}, out)

    def finish(self, names: Iterable[str]) -> None:
        """Move the files `names` of the partial directory into the output directory, which appears complete."""
        with atomic_directory(self.output) as staging:
            for name in names:
                os.rename(self.directory / name, staging / name)  # siblings: the same file system, no copy
        self.discard()

    def discard(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def _record(self) -> dict | None:
        try:
            record = json.loads((self.directory / PROGRESS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):  # none yet, or unreadable: start over
            return None
        return record if isinstance(record, dict) and isinstance(record.get("rows"), int) else None
