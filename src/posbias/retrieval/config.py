"""`retrievers`: the first-stage retrievers (BM25, dense, hybrid) the query sets name."""

from __future__ import annotations

from pathlib import Path

from posbias.config.section import ConfigError, Section, require
from posbias.config.sections.querysets import plain_querysets


class Retrievers(dict):
    """`CFG.retrievers`: name -> its block."""

    def __init__(self, cfg):
        super().__init__(cfg.data["retrievers"])

    def of_kind(self, kind: str) -> list[str]:
        return [r for r, s in self.items() if s["kind"] == kind]


def check(cfg: dict, warnings: list[str]) -> None:
    retrievers = cfg["retrievers"]
    for name in plain_querysets(cfg):
        spec = cfg["querysets"][name]
        if "candidates" not in spec:
            require(retrievers, spec["retriever"], f"querysets.{name}.retriever", "a key of retrievers")
    for name, spec in retrievers.items():
        if spec["kind"] == "hybrid":
            partner = retrievers.get(spec["bm25"])
            if partner is None or partner["kind"] != "bm25":
                raise ConfigError(f"retrievers.{name}.bm25: {spec['bm25']!r} is not a bm25 retriever")
    first_stage = cfg["tables"].get("first_stage")
    if first_stage:
        for qs in first_stage["querysets"]:
            require(plain_querysets(cfg), qs, "tables.first_stage.querysets", "a (not pooled) key of querysets")
        for item in first_stage["retrievers"]:
            require(retrievers, item, "tables.first_stage.retrievers", "a key of retrievers")


SECTION = Section("retrievers", Path(__file__).with_name("retrievers.schema.yaml"), check=check,
                  accessor=Retrievers)
