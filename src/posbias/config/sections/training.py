"""`training`: the training recipe every trained model shares, its query set and seeds; checked with the query
sets that `rerank`, `cross_validation` and `finetuning` name."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from posbias.config.canonical import canonical
from posbias.config.section import ConfigError, Section, require
from posbias.config.sections.querysets import plain_querysets


def training_recipe(training: Mapping, *overrides: Mapping | None) -> dict:
    """The `training` section as a job's recipe: without the seed list and the query set (adding a seed must
    not retrain the others), with each of `overrides` on top in order."""
    recipe = {k: v for k, v in training.items() if k not in ("seeds", "queryset")}
    for layer in overrides:
        recipe.update(layer or {})
    return canonical(recipe)


class Training:
    """`CFG.training`: the training query set and seeds."""

    def __init__(self, cfg):
        self.queryset: str | None = cfg.data["training"]["queryset"]
        self.seeds: list[int] = list(cfg.data["training"]["seeds"])


def check(cfg: dict, warnings: list[str]) -> None:
    if cfg["training"]["queryset"] is None:  # a config without the long-document study
        return
    plain = plain_querysets(cfg)
    require(plain, cfg["training"]["queryset"], "training.queryset", "a (not pooled) key of querysets")
    for qs in cfg["rerank"]["querysets"]:
        require(plain, qs, "rerank.querysets", "a (not pooled) key of querysets")
    if len(set(cfg["rerank"]["querysets"])) != len(cfg["rerank"]["querysets"]):
        raise ConfigError("rerank.querysets: lists a query set twice")
    for qs in cfg.get("cross_validation", {}).get("querysets", []):
        require(cfg["rerank"]["querysets"], qs, "cross_validation.querysets", "in rerank.querysets")
        if "folds" not in cfg["querysets"][qs]:
            raise ConfigError(f"cross_validation.querysets: {qs!r} has no `folds`")
    finetuning = cfg.get("finetuning")
    if finetuning:
        require(plain, finetuning["queryset"], "finetuning.queryset", "a (not pooled) key of querysets")
        cv = cfg.get("cross_validation", {}).get("querysets", [])
        for qs in finetuning["querysets"]:
            if qs not in cfg["rerank"]["querysets"] or qs in cv:
                raise ConfigError(f"finetuning.querysets: {qs!r} must be in rerank.querysets and not cross-validated")


SECTION = Section("training", Path(__file__).with_name("training.schema.yaml"), check=check, accessor=Training)
