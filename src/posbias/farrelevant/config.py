"""`farrelevant`: the FarRelevant collection (documents whose one relevant passage sits far from the start), built
from the generator's passages or read from a source (`farrelevant.source`), whose own keys it checks."""

from __future__ import annotations

from pathlib import Path

from posbias.config.canonical import canonical
from posbias.config.section import ConfigError, Section
from posbias.config.sections.querysets import far_source


def check(cfg: dict, warnings: list[str]) -> None:
    """A real source's own keys, and outcome tables that need one relevant document per query."""
    far = cfg.get("farrelevant")
    if not far:
        return
    source = far_source(cfg)
    if source["kind"] == "local" and far.get("train_queryset") and "train" not in source:
        raise ConfigError("farrelevant.source.train: required for a local source when farrelevant.train_queryset "
                          "names a training query set")
    if source.get("per") == "qrel":  # outcome tables need exactly one relevant document per query
        far_sets = {n for n, s in cfg["querysets"].items() if s.get("collection") == "farrelevant"}
        clash = sorted(far_sets & set(cfg.get("tables", {}).get("outcomes", {}).get("querysets", [])))
        if clash:
            raise ConfigError(f"tables.outcomes.querysets: {clash} can have several relevant documents per query "
                              f"with farrelevant.source.per: qrel")


class FarRelevant:
    """`CFG.farrelevant`: where its documents come from and its query sets."""

    def __init__(self, cfg):
        self._cfg = cfg
        self.source: dict = far_source(cfg.data)  # kind synthetic: from the generator's passages
        self.train_queryset: str | None = cfg.data.get("farrelevant", {}).get("train_queryset")

    @property
    def queryset(self) -> str:
        """The FarRelevant test query set (at most one besides farrelevant.train_queryset)."""
        return next((n for n, q in self._cfg.querysets.items() if q.collection == "farrelevant"
                     and n != self.train_queryset), "farrelevant")

    def build_params(self) -> dict:
        """What building FarRelevant receives (rules build_farrelevant and build_farrelevant_source, `posbias
        farrelevant` and `farrelevant-source`): the source when it is not the embedded passages, the builder's
        settings, the tokenizer that counts positions, and the query sets it writes."""
        block = self._cfg.data["farrelevant"]
        synthetic = self.source["kind"] == "synthetic"
        left_out = ("tokenizer", "train_queryset") if synthetic else ("tokenizer", "train_queryset", "source")
        return {**({} if synthetic else {"source": canonical(self.source)}),
                "settings": canonical({k: v for k, v in block.items() if k not in left_out}),
                "tokenizer": block["tokenizer"], "queryset": self.queryset, "train_queryset": self.train_queryset}


SECTION = Section("farrelevant", Path(__file__).with_name("farrelevant.schema.yaml"), check=check,
                  accessor=FarRelevant)
