"""`querysets`: the query sets, each of a collection (its queries, judgments, retriever and depth) or a pool of
reranked ones; checked with the collections they read (`collections`, and `generator`/`farrelevant` for the
generated ones)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Mapping

from posbias.config.canonical import canonical
from posbias.config.section import ConfigError, Section, require
from posbias.data import paths as data_paths

GENERATED_COLLECTIONS = ("synthetic", "farrelevant", "sweep")  # by the generator, FarRelevant and sweep builders
SYNTHETIC_QUERYSETS = ("train", "dev", "test")  # what the embedded generator writes


@dataclasses.dataclass(frozen=True)
class QuerySet:
    name: str
    metrics: tuple[str, ...]
    alpha: float
    rel_level: int
    collection: str | None = None  # None for a pooled query set
    depth: int | None = None
    retriever: str | None = None
    source: dict | None = None
    folds: list | str | None = None
    candidates: str | None = None  # a given run instead of retrieval
    pool: tuple[str, ...] = ()  # member query sets whose judged queries this one pools

    @property
    def pooled(self) -> bool:
        return bool(self.pool)

    @classmethod
    def from_spec(cls, name: str, spec: Mapping) -> "QuerySet":
        return cls(name=name, metrics=tuple(spec["metrics"]), alpha=spec["alpha"], rel_level=spec["rel_level"],
                   collection=spec.get("collection"), depth=spec.get("depth") if "pool" not in spec else None,
                   retriever=spec.get("retriever") if "pool" not in spec else None, source=spec.get("source"),
                   folds=spec.get("folds"), candidates=spec.get("candidates"), pool=tuple(spec.get("pool", ())))



class QuerySets(dict):
    """`CFG.querysets`: name -> QuerySet, and what is derived from one query set."""

    def __init__(self, cfg):
        super().__init__({n: QuerySet.from_spec(n, s) for n, s in cfg.data["querysets"].items()})

    @property
    def pooled(self) -> list[str]:
        return [n for n, q in self.items() if q.pooled]

    def evaluation_params(self, queryset: str) -> dict:
        qs = self[queryset]
        return canonical({"metrics": list(qs.metrics), "rel_level": qs.rel_level})

    def positions_file(self, queryset: str) -> str:
        """The true positions a generated collection writes for a query set (qid, start token, ...)."""
        return data_paths.positions(self[queryset].collection, queryset)

    def folds_count(self, queryset: str) -> int:
        """The number of folds of a cross-validated query set (a user's qid<TAB>fold file is read here)."""
        folds = self[queryset].folds
        if isinstance(folds, list):
            return len(folds)
        from posbias.io import read_folds

        numbers = set(read_folds(folds).values())
        if numbers != set(range(1, len(numbers) + 1)):
            raise ConfigError(f"querysets.{queryset}.folds: {folds} must number its folds 1..k, "
                              f"got {sorted(numbers)}")
        return len(numbers)


def far_source(cfg: dict) -> dict:
    """`farrelevant.source`; without one, FarRelevant is built from the generator's passages."""
    return cfg.get("farrelevant", {}).get("source", {"kind": "synthetic"})


def plain_querysets(cfg: dict) -> list[str]:
    return [n for n, s in cfg["querysets"].items() if "pool" not in s]


def check_collections(cfg: dict, warnings: list[str]) -> None:
    for name, spec in cfg["querysets"].items():
        if "pool" in spec:
            continue  # check_pools
        collection = spec.get("collection")
        if collection is None:
            raise ConfigError(f"querysets.{name}: needs `collection` (or `pool`, a list of query sets)")
        if collection == "synthetic" and name not in SYNTHETIC_QUERYSETS:
            raise ConfigError(f"querysets.{name}: the synthetic collection has only {SYNTHETIC_QUERYSETS}")
        if collection in GENERATED_COLLECTIONS:
            for key in ("source", "folds"):
                if key in spec:
                    raise ConfigError(f"querysets.{name}.{key}: the generated {collection} collection writes "
                                      f"its own queries and qrels")
            continue
        if collection not in cfg.get("collections", {}):
            raise ConfigError(f"querysets.{name}.collection: {collection!r} is neither a generated collection "
                              f"{GENERATED_COLLECTIONS} nor a key of collections")
        if "source" not in spec:
            raise ConfigError(f"querysets.{name}.source: required for query sets of collection {collection!r}")
        source = spec["source"]
        if source["kind"] == "local" and not {"queries", "qrels"} <= set(source):
            raise ConfigError(f"querysets.{name}.source: a local source needs `queries` and `qrels`")
        if isinstance(spec.get("folds"), list) and source["kind"] != "ir_datasets":
            raise ConfigError(f"querysets.{name}.folds: a list names ir_datasets subsets; use a qid<TAB>fold file")
    for name, spec in cfg.get("collections", {}).items():
        source = spec["documents"]
        if source["kind"] == "local" and "path" not in source:
            raise ConfigError(f"collections.{name}.documents.path: required for a local source")
        if spec.get("expansions") and not Path(spec["expansions"]).exists():
            warnings.append(f"collections.{name}.expansions: {spec['expansions']} does not exist (yet); "
                            f"its bm25_index job will fail until it does")
    far_train = cfg.get("farrelevant", {}).get("train_queryset")
    if far_train and cfg["querysets"].get(far_train, {}).get("collection") != "farrelevant":
        raise ConfigError(f"farrelevant.train_queryset: {far_train!r} is not a query set of the farrelevant collection")
    far = [n for n, s in cfg["querysets"].items() if s.get("collection") == "farrelevant" and n != far_train]
    if len(far) > 1:
        raise ConfigError(f"querysets: only one query set (besides farrelevant.train_queryset) may use the "
                          f"farrelevant collection, got {far}")
    used = {s.get("collection") for s in cfg["querysets"].values()}
    # FarRelevant documents are built from the generator's passage collection, unless farrelevant.source says
    # otherwise (MS MARCO passages, or the published collection).
    far_from_generator = far_source(cfg)["kind"] == "synthetic"
    for section, needed_by in (("generator", {"synthetic", *(["farrelevant"] if far_from_generator else [])}),
                               ("farrelevant", {"farrelevant"})):
        if used & needed_by and section not in cfg:
            raise ConfigError(f"{section}: required because a query set uses the {sorted(used & needed_by)} "
                              f"collection")


def check_pools(cfg: dict, warnings: list[str]) -> None:
    """A pooled query set (`pool: [dl19, dl20, dl21]`) stacks the judged queries of reranked query sets."""
    querysets = cfg["querysets"]
    for name, spec in querysets.items():
        if "pool" not in spec:
            continue
        for key in ("collection", "source", "folds", "candidates"):
            if key in spec:
                raise ConfigError(f"querysets.{name}.{key}: a pooled query set takes its queries from `pool`")
        if len(set(spec["pool"])) != len(spec["pool"]):
            raise ConfigError(f"querysets.{name}.pool: lists a query set twice")
        for member in spec["pool"]:
            require(querysets, member, f"querysets.{name}.pool", "a key of querysets")
            if "pool" in querysets[member]:
                raise ConfigError(f"querysets.{name}.pool: {member!r} is itself pooled")
            require(cfg["rerank"]["querysets"], member, f"querysets.{name}.pool", "in rerank.querysets")
            missing = [m for m in spec["metrics"] if m not in querysets[member]["metrics"]]
            if missing:
                raise ConfigError(f"querysets.{name}.metrics: {missing} not in querysets.{member}.metrics "
                                  f"(a pool's values are its members')")


def check(cfg: dict, warnings: list[str]) -> None:
    check_collections(cfg, warnings)
    check_pools(cfg, warnings)


SECTION = Section("querysets", Path(__file__).with_name("querysets.schema.yaml"), check=check, accessor=QuerySets)
