"""`cross_validation`: query sets reranked fold by fold (each fold by models trained on the others); checked by
the training section with the other query-set lists."""

from __future__ import annotations

from pathlib import Path

from posbias.config.section import Section


class CrossValidation:
    """`CFG.cross_validation`: the cross-validated query sets and their training overrides."""

    def __init__(self, cfg):
        section = cfg.data.get("cross_validation", {})
        self.querysets: list[str] = list(section.get("querysets", []))
        self.training: dict | None = section.get("training")


SECTION = Section("cross_validation", Path(__file__).with_name("cross_validation.schema.yaml"),
                  accessor=CrossValidation)
