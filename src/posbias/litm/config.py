"""The `litm` config section: which language models read which Lost-in-the-Middle tasks (multi-document QA,
key-value retrieval), at which sizes and gold positions."""

from __future__ import annotations

from pathlib import Path

from posbias.config.section import ConfigError, Section, require


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
        self._cfg = cfg
        self.data: dict = cfg.data.get("litm") or {}
        self.tasks: list[str] = [task for task in ("qa", "kv") if self.data.get(task)]
        self.models: list[str] = self.data.get("models", [])

    def prediction_keys(self, task: str) -> list[str]:
        """`{variant}/{setting}` of every prediction file of a task, per model."""
        from posbias.litm.steps import settings, variants_of

        section = self.data[task]
        return [f"{variant}/{name}" for name, _, _ in settings(task, section)
                for variant in variants_of(task, section, name)]

    def reported(self, task: str) -> list[str]:
        """`{task}_{size}` of each size the report shows (a table and a figure each)."""
        size_key = {"qa": "k", "kv": "n"}[task]
        return [f"{task}_{item[size_key]}" for item in self.data[task]["sizes"]]

    def score_params(self, task: str) -> dict:
        """What scoring a task's answers receives (rule litm_score_{task}, `posbias litm evaluate`): the
        `{model}/{variant}/{setting}` of each prediction file, in the order the files are read."""
        keys = self.prediction_keys(task)
        return {"task": task, "prediction_keys": [f"{m}/{key}" for m in self.models for key in keys]}

    def report_params(self, directory: str) -> dict:
        """What the report job receives (rule litm_report, `posbias litm report`): each reported size's table and
        figure files under `directory`, the sensitivity table's, the models' labels and the multiple-testing
        correction."""
        from posbias.litm.paths import report_files, sensitivity_table

        tables, figures = report_files(directory, [key for task in self.tasks for key in self.reported(task)])
        return {"tables": tables, "figures": figures, "labels": {m: self._cfg.llm.label(m) for m in self.models},
                "correction": self.data.get("correction", "holm"), "sensitivity": sensitivity_table(directory)}


SECTION = Section("litm", Path(__file__).with_name("config.schema.yaml"), check=check, accessor=Litm)
