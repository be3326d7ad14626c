"""The long-document study's sections go together: a config has all of them or none (then it runs only the other
analyses: Lost in the Middle, the probes, the positions of given collections)."""

from __future__ import annotations

from typing import Mapping

from posbias.config.section import ConfigError

STUDY_SECTIONS = ("querysets", "training", "rerank", "models", "tables")
OTHER_ANALYSES = ("litm", "probes", "positions", "audit")


def require_together(data: Mapping) -> None:
    """All of the study's sections or none, and something to run."""
    present = [key for key in STUDY_SECTIONS if key in data]
    if present and len(present) < len(STUDY_SECTIONS):
        missing = [key for key in STUDY_SECTIONS if key not in data]
        raise ConfigError(f"{missing[0]}: missing; the long-document study needs {', '.join(STUDY_SECTIONS)} "
                          f"together (this config sets {', '.join(present)}), or none of them to run only the "
                          f"other analyses")
    if not present and not any(key in data for key in OTHER_ANALYSES):
        raise ConfigError(f"(top level): nothing to run: give the long-document study ({', '.join(STUDY_SECTIONS)}), "
                          f"litm, probes, positions or audit")


def fill_absent(data: dict) -> None:
    """Without the study: no query sets, models, tables, training or reranking (so every section reads them)."""
    if "training" not in data:
        data.update(querysets={}, models={}, tables={}, training={"queryset": None, "seeds": []},
                    rerank={"querysets": []})
