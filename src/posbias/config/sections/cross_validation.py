"""`cross_validation`: query sets reranked fold by fold (each fold by models trained on the others); checked by
the training section with the other query-set lists."""

from __future__ import annotations

from pathlib import Path

from posbias.config.section import Section


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


SECTION = Section("cross_validation", Path(__file__).with_name("cross_validation.schema.yaml"),
                  accessor=CrossValidation)
