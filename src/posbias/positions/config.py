"""The `positions` config section: the query sets whose first relevant passage is located (sparse: matched
passages; dense: judged chunks), grouped for the table and Figure 1."""

from __future__ import annotations

from pathlib import Path

from posbias.config.canonical import canonical
from posbias.config.section import ConfigError, Section, require


def check(cfg: dict, warnings: list[str]) -> None:
    """The first-relevant-position analysis: its sets name query sets with documents, passages and judges that
    exist; its groups name its sets; Figure 1 names groups."""
    section = cfg.get("positions")
    if not section:
        return
    querysets, models = cfg["querysets"], cfg.get("llm", {}).get("models", {})
    for name, spec in section["sets"].items():
        where = f"positions.sets.{name}"
        require(querysets, spec["queryset"], f"{where}.queryset", "a key of querysets")
        if "collection" not in querysets[spec["queryset"]]:
            raise ConfigError(f"{where}.queryset: {spec['queryset']!r} is pooled; name one of its members")
        passages = spec.get("passages")
        if passages == "generator":
            if "generator" not in cfg or querysets[spec["queryset"]]["collection"] != "synthetic":
                raise ConfigError(f"{where}.passages: generator passages exist only for the embedded collection's "
                                  f"query sets (collection synthetic, with `generator`)")
        elif passages is not None:
            require(querysets, passages, f"{where}.passages", "generator or a key of querysets")
            if "collection" not in querysets[passages]:
                raise ConfigError(f"{where}.passages: {passages!r} is pooled; name the passage query set itself")
        if spec["kind"] == "dense":
            judge = spec.get("judge", section["dense"].get("judge"))
            if judge is None:
                raise ConfigError(f"{where}.judge: a dense set needs a judge (or positions.dense.judge)")
            require(models, judge, f"{where}.judge" if "judge" in spec else "positions.dense.judge",
                     "a key of llm.models")
            if _reads_passages(models[judge]) and passages is None:
                raise ConfigError(f"{where}.passages: the mock {models[judge]['model']} judge answers from the "
                                  f"relevant passages; set passages: generator")
            for other in section["dense"]["consistency"]["judges"]:
                require(models, other, "positions.dense.consistency.judges", "a key of llm.models")
                if _reads_passages(models[other]) and passages is None:
                    raise ConfigError(f"positions.dense.consistency.judges: the mock {other!r} answers from the "
                                      f"relevant passages, which {where} lacks (set its passages: generator)")
    depth, retriever = section["matching"]["bm25_depth"], section["matching"]["retriever"]
    if depth and any(s["kind"] == "sparse" for s in section["sets"].values()):
        require(cfg["retrievers"], retriever, "positions.matching.retriever", "a key of retrievers")
        if cfg["retrievers"][retriever]["kind"] != "bm25":
            raise ConfigError(f"positions.matching.retriever: {retriever!r} is not a bm25 retriever")
    for group, spec in section["groups"].items():
        for name in spec["sets"]:
            require(section["sets"], name, f"positions.groups.{group}.sets", "a key of positions.sets")
    for group in section.get("figure1", []):
        require(section["groups"], group, "positions.figure1", "a key of positions.groups")


def _reads_passages(model: dict) -> bool:
    """A mock judge that answers from the relevant passages (`meta["answer"]`), which only a set with passages has."""
    return model["backend"] == "mock" and model["model"] in ("oracle", "order_biased")


class Positions:
    """`CFG.positions`: the section's block (empty without one), its sets by kind, and what its jobs receive besides
    files (rules/positions.smk's params and `posbias positions ...` alike)."""

    def __init__(self, cfg):
        self._cfg = cfg
        self.data: dict = cfg.data.get("positions") or {}
        self.sets: dict = self.data.get("sets", {})
        self.sparse: list[str] = [name for name, spec in self.sets.items() if spec["kind"] == "sparse"]
        self.dense: list[str] = [name for name, spec in self.sets.items() if spec["kind"] == "dense"]

    def judge(self, name: str) -> str:
        """The llm.models key that judges a dense set's chunks."""
        return self.sets[name].get("judge", self.data["dense"].get("judge"))

    @property
    def figure1(self) -> list[str]:
        return self.data.get("figure1") or list(self.data.get("groups", {}))[:3]

    def set_args(self, name: str) -> dict:
        """A set's job: its spec and settings; a sparse set's BM25 parameters, a dense set's judge and cache."""
        common = dict(spec=canonical(self.sets[name]))
        if self.sets[name]["kind"] == "sparse":
            matching = self.data["matching"]
            retriever = self._cfg.retrievers[matching["retriever"]] if matching["bm25_depth"] else None
            return dict(common, settings=canonical({k: self.data[k] for k in ("tokenizer", "bin_tokens", "matching")}),
                        retriever=canonical({k: retriever.get(k) for k in ("k1", "b")}) if retriever else None)
        judges = self.data["dense"]["consistency"]["judges"]
        return dict(common, settings=canonical({k: self.data[k] for k in ("tokenizer", "bin_tokens", "dense")}),
                    judge=self._cfg.llm.model(self.judge(name)), judge_name=self.judge(name),
                    cache=self._cfg.llm.cache,
                    order_judges=canonical({j: self._cfg.llm.model(j) for j in judges if j != self.judge(name)}))

    def report_args(self) -> dict:
        """The report's job: every set in order, the settings, labels, groups and Figure 1's groups; the judges'
        labels and which of them are mock oracles (consistent by construction, which the judges table says)."""
        judges = sorted({*(self.judge(s) for s in self.dense), *self.data["dense"]["consistency"]["judges"]})
        models = self._cfg.data.get("llm", {}).get("models", {})
        oracles = [j for j in judges if models[j]["backend"] == "mock" and models[j]["model"] == "oracle"]
        return dict(sets=list(self.sets),
                    settings=canonical({k: self.data[k] for k in ("tokenizer", "bin_tokens", "max_bin", "dense")}),
                    labels={s: spec.get("label", s) for s, spec in self.sets.items()},
                    groups=canonical(self.data["groups"]), group_order=list(self.data["groups"]),
                    figure1=self.figure1, judge_labels={j: self._cfg.llm.label(j) for j in judges},
                    oracle_judges=oracles)


SECTION = Section("positions", Path(__file__).with_name("config.schema.yaml"), check=check,
                  accessor=Positions)
