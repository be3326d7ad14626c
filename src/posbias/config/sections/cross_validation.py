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

    def fold_params(self, model: str, seed: int | str, fold: int | str) -> dict:
        """What one fold's job receives besides files (rule cross_validate_fold, `posbias cross-validate fold`):
        the model's block, its recipe with this section's overrides, the fold, and the run's tag."""
        models = self._cfg.models
        return {"model": models.params(model), "training": models.training_params(model, self.training),
                "seed": int(seed), "fold": int(fold), "name": model, "tag": run_tag(model, seed)}


def run_tag(model: str, seed: int | str) -> str:
    """The tag (last column) of a cross-validated run, its fold runs' and the merged one's."""
    return f"{model}-seed{seed}"


SECTION = Section("cross_validation", Path(__file__).with_name("cross_validation.schema.yaml"),
                  accessor=CrossValidation)
