"""`finetuning`: fine-tuning trained checkpoints on a query set before reranking others (checked with training)."""

from __future__ import annotations

from pathlib import Path

from posbias.config.section import Section


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


SECTION = Section("finetuning", Path(__file__).with_name("finetuning.schema.yaml"), accessor=Finetuning)
