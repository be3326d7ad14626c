"""The training stage's config sections: `training` (the recipe every trained model shares, its query set and
seeds; checked with the query sets that `rerank`, `cross_validation` and `finetuning` name), `cross_validation`
(query sets reranked fold by fold, each fold by models trained on the others) and `finetuning` (trained checkpoints
fine-tuned on a query set before reranking others)."""

from __future__ import annotations

from pathlib import Path

from posbias.config.section import ConfigError, Section, require
from posbias.config.sections.querysets import plain_querysets


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


TRAINING = Section("training", Path(__file__).with_name("training.schema.yaml"), check=check, accessor=Training)


class CrossValidation:
    """`CFG.cross_validation`: the cross-validated query sets and their training overrides."""

    def __init__(self, cfg):
        section = cfg.data.get("cross_validation", {})
        self._cfg = cfg
        self.querysets: list[str] = list(section.get("querysets", []))
        self.training: dict | None = section.get("training")
        self._per_checkpoint = section.get("jobs", "per_fold") == "per_checkpoint"

    @property
    def checkpoint_job_models(self) -> list[str]:
        """Trained models whose checkpoints run every fold of every cross-validated query set in one job
        (`cross_validation.jobs: per_checkpoint`, rule cross_validate_checkpoint): those that rerank all of these
        query sets. The others, and every model under the default `per_fold`, get a job per fold."""
        models = self._cfg.models
        if not self._per_checkpoint:
            return []
        return [m for m in models.trained if all(map(models[m].reranks, self.querysets))]

    def fold_params(self, model: str, seed: int | str, fold: int | str) -> dict:
        """What one fold's job receives besides files (rule cross_validate_fold, `posbias cross-validate fold`):
        the model's block, its recipe with this section's overrides, the fold, and the run's tag."""
        return {**self.checkpoint_params(model, seed), "fold": int(fold)}

    def checkpoint_params(self, model: str, seed: int | str) -> dict:
        """What a checkpoint's job for all its folds receives besides files (rule cross_validate_checkpoint,
        `posbias cross-validate checkpoint`): the same as a fold's, but the fold."""
        models = self._cfg.models
        return {"model": models.params(model), "training": models.training_params(model, self.training),
                "seed": int(seed), "name": model, "tag": run_tag(model, seed)}


def run_tag(model: str, seed: int | str) -> str:
    """The tag (last column) of a cross-validated run, its fold runs' and the merged one's."""
    return f"{model}-seed{seed}"


CROSS_VALIDATION = Section("cross_validation", Path(__file__).with_name("cross_validation.schema.yaml"),
                           accessor=CrossValidation)


class Finetuning(dict):
    """`CFG.finetuning`: the block (empty when the config fine-tunes nothing), and what a fine-tuning job gets."""

    def __init__(self, cfg):
        super().__init__(cfg.data.get("finetuning") or {})
        self._cfg = cfg

    def job_params(self, model: str, seed: int | str) -> dict:
        """What fine-tuning one checkpoint receives besides files (rules finetune and rerank_checkpoint, and
        `posbias finetune`): the model's block, its recipe with this section's overrides, and its names."""
        models = self._cfg.models
        return {"model": models.params(model), "training": models.training_params(model, self.get("training")),
                "seed": int(seed), "name": f"{model}-finetuned", "tag": f"{model}-finetuned-seed{seed}"}


FINETUNING = Section("finetuning", Path(__file__).with_name("finetuning.schema.yaml"), accessor=Finetuning)


SECTIONS = (TRAINING, CROSS_VALIDATION, FINETUNING)
