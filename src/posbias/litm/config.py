"""The `litm` config section: which language models read which Lost-in-the-Middle tasks (multi-document QA,
key-value retrieval), at which sizes and gold positions."""

from __future__ import annotations

from pathlib import Path

from posbias.config.section import ConfigError, Section, Stage, require


def check(cfg: dict, warnings: list[str]) -> None:
    """Its models are language models of `llm.models`; its positions fit its sizes."""
    known = cfg.get("llm", {}).get("models", {})
    litm = cfg.get("litm")
    if not litm:
        return
    for m in litm["models"]:
        require(known, m, "litm.models", "a key of llm.models")
    for task, size in (("qa", "k"), ("kv", "n")):
        for i, item in enumerate(litm.get(task, {}).get("sizes", [])):
            outside = [p for p in item["positions"] if p >= item[size]]
            if outside:
                raise ConfigError(f"litm.{task}.sizes[{i}].positions: {outside} are not below {size} = {item[size]} "
                                  f"(positions are 0-based)")
        sizes = [item[size] for item in litm.get(task, {}).get("sizes", [])]
        if len(set(sizes)) != len(sizes):
            raise ConfigError(f"litm.{task}.sizes: lists {size} = {sizes} with repeats")
    qa = litm.get("qa")
    if qa and qa["source"]["kind"] == "synthetic" and "generator" not in cfg:
        raise ConfigError("litm.qa.source: the synthetic source asks about the embedded world, which needs `generator`")
    if qa and qa["source"]["kind"] == "files" and "random_order" in qa["variants"]:
        raise ConfigError("litm.qa.variants: random_order reorders distractors, which needs the retrieval results "
                          "(source kind retrieval or synthetic), not already-built files")
    if not (litm.get("qa") or litm.get("kv")):
        raise ConfigError("litm: needs `qa`, `kv` or both")


class Litm:
    """`CFG.litm`: the section's block (empty without one), its tasks and models."""

    def __init__(self, cfg):
        self.data: dict = cfg.data.get("litm") or {}
        self.tasks: list[str] = [task for task in ("qa", "kv") if self.data.get(task)]
        self.models: list[str] = self.data.get("models", [])


SECTION = Section("litm", Path(__file__).with_name("config.schema.yaml"), check=check, accessor=Litm,
                  stage=Stage("rules/litm.smk", "LITM_REPORTED", "posbias.litm.cli"))
