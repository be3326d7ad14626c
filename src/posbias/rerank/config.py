"""`rerank`: the query sets every model reranks, and how its jobs score (batch size, device, precision, jobs)."""

from __future__ import annotations

from pathlib import Path

from posbias.config.canonical import canonical
from posbias.config.section import Section


class Rerank:
    """`CFG.rerank`: which query sets are reranked, and how."""

    def __init__(self, cfg):
        self._cfg = cfg
        self.querysets: list[str] = list(cfg.data["rerank"]["querysets"])
        self._per_checkpoint = cfg.data["rerank"].get("jobs", "per_queryset") == "per_checkpoint"

    @property
    def direct(self) -> list[str]:
        """Query sets each trained checkpoint reranks directly (cross-validated ones go fold by fold)."""
        return [qs for qs in self.querysets if qs not in self._cfg.cross_validation.querysets]

    @property
    def evaluated(self) -> list[str]:
        """Query sets with per-query values of every system: the reranked ones and the pools of them."""
        return [*self.querysets, *self._cfg.querysets.pooled]

    @property
    def checkpoint_job_models(self) -> list[str]:
        """Trained models whose checkpoints rerank all their direct query sets in one job
        (`rerank.jobs: per_checkpoint`): those that rerank every direct query set. The others, and every model
        under the default `per_queryset`, get a job per (query set, checkpoint)."""
        models = self._cfg.models
        if not self._per_checkpoint or not self.direct:
            return []
        return [m for m in models.trained if all(map(models[m].reranks, self.direct))]

    @property
    def zero_shot_job_models(self) -> list[str]:
        """Zero-shot models that score all the reranked query sets in one job under `rerank.jobs: per_checkpoint`
        (rule rerank_zero_shot_model: one process start and model load, as a checkpoint's job); otherwise, and
        for a model that skips some query set, one job per query set."""
        models = self._cfg.models
        if not self._per_checkpoint or not self.querysets:
            return []
        return [m for m in models.zero_shot if all(map(models[m].reranks, self.querysets))]

    def scoring(self, model: str) -> dict:
        """How a model's rerank jobs score: the `rerank` section's batch size, device and autocast precision;
        a model trained at a precision of its own (`models.<name>.training.precision`) also scores at it."""
        scoring = {k: v for k, v in self._cfg.data["rerank"].items() if k not in ("querysets", "jobs")}
        if "precision" in self._cfg.models[model].training:
            scoring["precision"] = self._cfg.models[model].training["precision"]
        return canonical(scoring)


SECTION = Section("rerank", Path(__file__).with_name("rerank.schema.yaml"), accessor=Rerank)
