"""The files ir_datasets keeps for a dataset's documents, queries or judgments, found without reading them.

ir_datasets downloads each file the first time a dataset's records are read, into IR_DATASETS_HOME, and reads it
from there afterwards. Which files a part of a dataset reads is held by the objects ir_datasets builds for it: a
`Download` (a file fetched from its mirrors, its MD5 checked) or a `Cache` (a file written once from another
stream, such as the queries cut out of an archive). `stored_files` walks a part's handler for them, stopping at
each, and never calls anything that would download: `posbias stage` fetches the missing ones through the same
objects (`StoredFile.fetch`, ir_datasets' own download), and a job offline checks that they are all there before
it reads (`require_staged`). A file ir_datasets cannot download (TREC Disks 4 and 5 for Robust04, which it reads
from a copy placed by hand) is `manual`, with ir_datasets' own instructions.

The walk does not follow values computed on demand (`Lazy`, such as the judged queries' ids, read from the same
dataset's judgments): their closures reach every subset of a collection, which would stage far more than a part
reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from posbias.errors import InputError
from posbias.staging.offline import is_offline, not_staged

PARTS = ("docs", "queries", "qrels")


@dataclass(frozen=True)
class StoredFile:
    path: Path
    writer: object  # the ir_datasets Download or Cache that writes it
    instructions: str | None = None  # ir_datasets' message for a file placed by hand; None for one it downloads

    @property
    def present(self) -> bool:
        return self.path.exists()

    @property
    def manual(self) -> bool:
        return self.instructions is not None

    def fetch(self) -> None:
        """Download it (or write it from its download) with ir_datasets' own code, MD5 checked."""
        self.writer.path()


def _manual_instructions(download) -> str | None:
    """ir_datasets' instructions when every source of a Download is a file placed by hand (`LocalDownload` with a
    message); a download with any remote mirror is fetched."""
    from ir_datasets.util.download import LocalDownload

    mirrors = getattr(download, "mirrors", [])
    if mirrors and all(isinstance(mirror, LocalDownload) for mirror in mirrors):
        return " ".join(str(getattr(mirror, "_message", "") or "") for mirror in mirrors).strip() or \
            "ir_datasets reads it from a copy placed by hand"
    return None


def _walk(node, found: dict[Path, StoredFile], seen: set[int]) -> None:
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.util import Cache, Download, Lazy

    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, Download):
        if node._cache_path is not None:  # one without is a temporary file, reached only through a Cache
            path = Path(node._cache_path)
            found.setdefault(path, StoredFile(path, node, _manual_instructions(node)))
        return
    if isinstance(node, Cache):
        found.setdefault(Path(node._path), StoredFile(Path(node._path), node))
        return
    if isinstance(node, (Lazy, Dataset)):  # see the module's docstring; a Dataset: another dataset's every part
        return
    if isinstance(node, (list, tuple, set, frozenset)):
        children = node
    elif isinstance(node, dict):
        children = node.values()
    elif type(node).__module__.startswith("ir_datasets") and hasattr(node, "__dict__"):
        children = vars(node).values()
    else:
        return
    for child in children:
        _walk(child, found, seen)


def stored_files(dataset_id: str, part: str) -> list[StoredFile]:
    """The files ir_datasets reads for the `part` (docs, queries, qrels) of a dataset; an unknown id or a part the
    dataset lacks is an `InputError`."""
    import ir_datasets

    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(f"ir_datasets has no dataset {dataset_id!r}") from None
    if not getattr(dataset, f"has_{part}")():
        raise InputError(f"ir_datasets {dataset_id!r} has no {part}")
    found: dict[Path, StoredFile] = {}
    _walk(getattr(dataset, f"{part}_handler")(), found, set())
    return list(found.values())


def require_staged(dataset_id: str, part: str) -> None:
    """Offline, a `NotStagedError` naming the first file of the part that is not on this machine; online nothing
    (ir_datasets downloads what it lacks)."""
    if not is_offline():
        return
    missing = [stored for stored in stored_files(dataset_id, part) if not stored.present]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise not_staged(f"ir_datasets {dataset_id} {part} ({missing[0].path}{more})")


def verify_manual(dataset_id: str, expected: str | None, key: str = "manual_sha256") -> None:
    """Refuse documents ir_datasets reads from a copy placed by hand (TREC Disks 4 and 5) when the copy's sha256
    is not `expected`, the source's `key`."""
    from posbias.staging.checksums import verify

    if expected:
        for stored in stored_files(dataset_id, "docs"):
            if stored.manual:
                verify(stored.path, expected, key)
