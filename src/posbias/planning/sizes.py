"""How much data a run reads: documents per collection, queries per query set, and what it downloads.

Every number comes from somewhere that can be named, in this order of preference:

- the file itself, when the working directory already holds it (a query set's TSV: its lines, counted);
- ir_datasets' own metadata (`ir_datasets/etc/metadata.json`, shipped with the package: the record counts its
  documentation lists) for an `ir_datasets` source, and its download table (`etc/downloads.json`: each file's
  `size_hint`) for what fetching it downloads;
- the config, for what the workflow builds itself (FarRelevant's and the generator's query counts);
- otherwise the count is unknown, and says why. Nothing is typed into this module.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

from posbias.config.sections.querysets import GENERATED_COLLECTIONS
from posbias.data import paths as data_paths


@dataclasses.dataclass(frozen=True)
class Count:
    """A number with where it comes from; `value` None when it is not known (`source` says why). `at_most`:
    the number is an upper bound (FarRelevant's documents: the judgments it builds them from)."""
    value: int | None
    source: str
    at_most: bool = False

    @property
    def known(self) -> bool:
        return self.value is not None


@dataclasses.dataclass(frozen=True)
class Download:
    """One file a job downloads: `key` identifies it across jobs (ir_datasets' cache path), so a file that two
    query sets share is counted once."""
    key: str
    bytes: int | None
    source: str


class Sizes:
    """The sizes of a config's collections and query sets (`cfg`: a `posbias.config.Config`), with the files of
    `directory` (a run's working directory) counted where they exist."""

    def __init__(self, cfg, directory: str | Path | None = None):
        self.cfg = cfg
        self.directory = Path(directory) if directory else None

    # --- query sets ------------------------------------------------------------------------------------------

    @functools.cache
    def queries(self, queryset: str) -> Count:
        qs = self.cfg.querysets[queryset]
        counted = self._counted_lines(data_paths.queries(qs.collection, queryset))
        if counted:
            return counted
        source = qs.source or {}
        if source.get("kind") == "ir_datasets":
            return _irds_count(source["id"], "queries")
        if qs.collection == "farrelevant":
            far = self.cfg.data.get("farrelevant", {})
            key = "n_train_queries" if queryset == self.cfg.farrelevant.train_queryset else "n_queries"
            if key in far:
                return Count(far[key], f"config farrelevant.{key}")
        generator = self.cfg.data.get("generator", {}).get("settings", {})
        if qs.collection == "synthetic" and f"n_{queryset}_queries" in generator:
            return Count(generator[f"n_{queryset}_queries"], f"config generator.settings.n_{queryset}_queries")
        kind = source.get("kind") or ("built by the workflow" if qs.collection in GENERATED_COLLECTIONS else "?")
        return Count(None, f"query set {queryset} ({kind}): no count before its file exists")

    # --- collections -----------------------------------------------------------------------------------------

    @functools.cache
    def documents(self, collection: str) -> Count:
        spec = self.cfg.collections.get(collection, {})
        documents = spec.get("documents", {})
        if documents.get("kind") == "ir_datasets":
            return _irds_count(documents["id"], "docs")
        if collection == "farrelevant" and self.cfg.farrelevant.source.get("kind") == "ir_datasets":
            # one document per judged query (per: query) or per judgment (per: qrel) of its test and training
            # sets: at most their judgments
            source = self.cfg.farrelevant.source
            counts = [_irds_count(source[part], "qrels") for part in ("test", "train")]
            if all(c.known for c in counts):
                return Count(sum(c.value for c in counts),
                             "at most the judgments of " + " and ".join(c.source for c in counts), at_most=True)
        debiased = self.cfg.models.debiased_collections.get(collection)
        if debiased:  # a de-biased copy has its original's documents
            return self.documents(debiased["base"])
        kind = documents.get("kind") or ("built by the workflow" if collection in GENERATED_COLLECTIONS else "?")
        return Count(None, f"collection {collection} ({kind}): no count before it is built")

    @functools.cache
    def doc_id_length(self, collection: str) -> Count:
        """The longest document id (characters), which a token store's key column and a run's lines hold."""
        documents = self.cfg.collections.get(collection, {}).get("documents", {})
        if documents.get("kind") == "ir_datasets":
            length = _irds_metadata(documents["id"], "docs").get("fields", {}).get("doc_id", {}).get("max_len")
            if length:
                return Count(length, f"ir_datasets metadata: {documents['id']} doc_id max_len")
        return Count(None, f"collection {collection}: longest document id unknown")

    # --- downloads -------------------------------------------------------------------------------------------

    def collection_downloads(self, collection: str) -> list[Download]:
        documents = self.cfg.collections.get(collection, {}).get("documents", {})
        if documents.get("kind") == "ir_datasets":
            return irds_downloads(documents["id"], "docs")
        return []

    def queryset_downloads(self, queryset: str) -> list[Download]:
        source = self.cfg.querysets[queryset].source or {}
        if source.get("kind") != "ir_datasets":
            return []
        return irds_downloads(source["id"], "queries") + irds_downloads(source["id"], "qrels")

    def _counted_lines(self, relative: str) -> Count | None:
        if self.directory is None or not (self.directory / relative).is_file():
            return None
        with open(self.directory / relative, "rb") as lines:
            return Count(sum(1 for line in lines if line.strip()), f"lines of {relative}")


# --- ir_datasets -------------------------------------------------------------------------------------------------

def _irds_version() -> str:
    import ir_datasets

    return f"ir_datasets {ir_datasets.__version__}"


@functools.cache
def _irds_count(dataset_id: str, kind: str) -> Count:
    """`kind` (docs, queries, qrels) of an ir_datasets dataset, from the metadata the package ships: a subset's
    documents are its parent collection's (ir_datasets records a `_ref`)."""
    from posbias.data.sources import SourceError, irds

    try:
        dataset = irds.load(dataset_id)
        count = getattr(dataset, f"{kind}_count")() if getattr(dataset, f"has_{kind}")() else None
    except SourceError as err:
        return Count(None, str(err))
    if count is None:
        return Count(None, f"{_irds_version()} metadata has no {kind} count for {dataset_id}")
    return Count(int(count), f"{_irds_version()} metadata: {dataset_id} {kind}")


def _irds_metadata(dataset_id: str, kind: str) -> dict:
    """The metadata record of `kind`, following ir_datasets' `_ref` from a subset to the dataset that holds it."""
    metadata = _shipped_metadata()
    seen = set()
    while dataset_id in metadata and dataset_id not in seen:
        seen.add(dataset_id)
        record = metadata[dataset_id].get(kind, {})
        if "_ref" not in record:
            return record
        dataset_id = record["_ref"]
    return {}


@functools.cache
def _shipped_metadata() -> dict:
    import json

    import ir_datasets

    return json.loads((Path(ir_datasets.__file__).parent / "etc" / "metadata.json").read_text(encoding="utf-8"))


@functools.cache
def irds_downloads(dataset_id: str, kind: str) -> list[Download]:
    """The files that reading `kind` of a dataset downloads, with ir_datasets' size hint for each. ir_datasets
    builds each reader over download objects; they are found by walking the reader's attributes (its public API
    names no files), so a reader built differently lists nothing rather than failing."""
    from ir_datasets.util.download import Download as IrdsDownload

    from posbias.data.sources import SourceError, irds

    try:
        dataset = irds.load(dataset_id)
        if not getattr(dataset, f"has_{kind}")():
            return []
        handler = getattr(dataset, f"{kind}_handler")()
    except SourceError:
        return []
    found, seen, stack = [], set(), [(handler, 0)]
    while stack:
        item, depth = stack.pop()
        if id(item) in seen or depth > 12:
            continue
        seen.add(id(item))
        if isinstance(item, IrdsDownload):
            found.append(item)
        elif isinstance(item, (list, tuple, set)):
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif type(item).__module__.startswith("ir_datasets") and hasattr(item, "__dict__"):
            stack.extend((child, depth + 1) for child in vars(item).values())
    source = f"{_irds_version()} downloads.json size_hint ({dataset_id} {kind})"
    return [Download(key=str(getattr(d, "_cache_path", id(d))), bytes=getattr(d, "_size_hint", None),
                     source=source if getattr(d, "_size_hint", None) else
                     f"{dataset_id} {kind}: no size in ir_datasets (a licensed or local corpus)")
            for d in found]
