"""The one list of config sections: a module per top-level key, each declaring `SECTION`
(`posbias.config.section.Section`). Adding a section means adding its module here and nothing else; an analysis
stage is a section with a `stage` (its rules, targets and commands), so adding a stage is one line here too.

The order is the order of derivations and checks (a check may rely on an earlier one: tables' models exist
before the reproduction names their rows). Modules are named, not imported, so that this package imports no
analysis stage: they are imported when a config is first prepared."""

from __future__ import annotations

import importlib
from functools import lru_cache

from posbias.config.section import Section, Stage

SECTION_MODULES = (
    "posbias.config.sections.experiment",
    "posbias.config.sections.departures",
    "posbias.config.sections.generator",
    "posbias.config.sections.collections",
    "posbias.config.sections.querysets",
    "posbias.config.sections.retrievers",
    "posbias.config.sections.training",
    "posbias.config.sections.cross_validation",
    "posbias.config.sections.finetuning",
    "posbias.config.sections.statistics",
    "posbias.config.sections.rerank",
    "posbias.config.sections.models",
    "posbias.config.sections.tables",
    "posbias.config.sections.external_runs",
    "posbias.config.sections.farrelevant",
    "posbias.config.sections.llm",
    "posbias.litm.config",
    "posbias.probes.config",
    "posbias.sweep.config",
    "posbias.positions.config",
    "posbias.audit.config",
    "posbias.config.sections.revisions",  # after every section whose keys name a model
    "posbias.config.sections.reproduction",
)


@lru_cache(maxsize=1)
def sections() -> dict[str, Section]:
    """key -> Section, in the registry's order."""
    declared = [importlib.import_module(name).SECTION for name in SECTION_MODULES]
    return {section.key: section for section in declared}


def stages() -> dict[str, Stage]:
    """key -> Stage of every analysis stage, in the registry's order (the Snakefile's includes, the commands)."""
    return {key: section.stage for key, section in sections().items() if section.stage}
