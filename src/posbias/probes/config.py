"""The `probes` config section: which probes run on which Re-DocRED data, scored by which scorers."""

from __future__ import annotations

from pathlib import Path

from posbias.config.canonical import canonical
from posbias.config.section import ConfigError, Section, require
from posbias.probes import declarations
from posbias.rankers import catalog
from posbias.training import paths as training_paths


def check(cfg: dict, warnings: list[str]) -> None:
    """A checkpoint scorer names a trained model (and one of its seeds); the heatmap names scorers."""
    probes = cfg.get("probes")
    if not probes:
        return
    for name, scorer in probes["scorers"].items():
        if scorer["kind"] != "checkpoint":
            continue
        where = f"probes.scorers.{name}.model"
        require(cfg["models"], scorer["model"], where, "a key of models")
        model = cfg["models"][scorer["model"]]
        if model.get("zero_shot") or model["ranker"] in catalog.LISTWISE:
            raise ConfigError(f"{where}: {scorer['model']!r} is never trained, so it has no checkpoint to score with")
        seeds = model.get("seeds", cfg.get("training", {}).get("seeds", []))
        if "seed" in scorer and scorer["seed"] not in seeds:
            raise ConfigError(f"probes.scorers.{name}.seed: {scorer['seed']} is not a training seed of "
                              f"{scorer['model']!r} ({seeds})")
    if "poison" in probes["probes"] and "poison" not in probes:
        raise ConfigError("probes.probes: poison needs probes.poison (its replacements' source: llm, file or swap)")
    if probes.get("poison", {}).get("source") == "llm":
        require(cfg.get("llm", {}).get("models", {}), probes["poison"]["model"], "probes.poison.model",
                 "a key of llm.models")
    if "rag" in probes:
        if "poison" not in probes["probes"]:
            raise ConfigError("probes.rag: RAG poisoning reads the poison probe's documents; list poison under "
                              "probes.probes")
        known = cfg.get("llm", {}).get("models", {})
        for name in probes["rag"]["readers"]:
            require(known, name, "probes.rag.readers", "a key of llm.models")
        require(known, probes["rag"]["judge"], "probes.rag.judge", "a key of llm.models")
    for key in ("head_count_bins", "length_bins"):
        bins = probes["heatmap"][key]
        if any(b >= a for a, b in zip(bins[1:], bins)):
            raise ConfigError(f"probes.heatmap.{key}: {bins} must increase")


class Probes:
    """`CFG.probes`: the section's block (empty without one), its probes and scorers as jobs and reports want them."""

    def __init__(self, cfg):
        self._cfg = cfg
        self.data: dict = cfg.data.get("probes") or {}
        self.names: list[str] = self.data.get("probes", [])
        self.scorers: list[str] = list(self.data.get("scorers", {}))

    def scorer(self, name: str) -> dict:
        """A scorer's section as its job receives it (the label is the report's business)."""
        return canonical({k: v for k, v in self.data["scorers"][name].items() if k != "label"})

    def checkpoint(self, name: str) -> str | None:
        """The checkpoint directory a `checkpoint` scorer reads (its model's first training seed by default)."""
        spec = self.data["scorers"][name]
        if spec["kind"] != "checkpoint":
            return None
        seed = spec.get("seed", self._cfg.models.seeds(spec["model"])[0])
        return training_paths.checkpoint(spec["model"], seed)

    def label(self, name: str) -> str:
        spec = self.data["scorers"][name]
        default = self._cfg.models[spec["model"]].label if spec["kind"] == "checkpoint" else name
        return spec.get("label", default)


SECTION = Section("probes", Path(__file__).with_name("config.schema.yaml"), check=check, accessor=Probes,
                  complete_schema=declarations.with_probes)
