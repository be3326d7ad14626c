"""The one list of stages and of config sections.

A stage is a folder of the package (`posbias/<stage>/`) with its role modules: `cli.py` (its `register(commands)`
adds its `posbias` commands), `steps.py` (its jobs), `paths.py` (its output paths) and `config.py` (its config
sections), and its rules in `rules/<stage>.smk`, which may define `<STAGE>_REPORTED`, the targets it adds to `rule
all`. `STAGES` lists them in the order `posbias --help` shows their commands and the Snakefile includes their rules;
adding a stage is a folder, its rules file and one line there.

A config section is declared by a `Section` (`posbias.config.section`): a module declares its `SECTION`, or a stage's
`config.py` its `SECTIONS` in order. The sections every stage reads are `SECTION_MODULES` (`posbias.config.sections`).
Their order, then the stages' sections in the order of `STAGES`, then `LAST_SECTION_MODULES` is the order of
derivations and checks (a check may rely on an earlier one: tables' models exist before the
reproduction names their rows). Modules are named, not imported, so that this package imports no stage: a stage's
modules are found by their files and imported when a config is first prepared or the command line is built."""

from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path

from posbias.config.section import Section

STAGES = (
    "staging",
    "data",
    "farrelevant",
    "retrieval",
    "training",
    "rerank",
    "evaluation",
    "provenance",
    "planning",
    "workflow",
    "litm",
    "probes",
    "sweep",
    "positions",
    "audit",
    "judges",
)
SECTION_MODULES = (  # the sections every stage reads, before the stages' own
    "posbias.config.sections.experiment",
    "posbias.config.sections.departures",
    "posbias.config.sections.querysets",
    "posbias.config.sections.models",
    "posbias.config.sections.llm",
)
LAST_SECTION_MODULES = (
    "posbias.config.sections.revisions",  # after every section whose keys name a model
    "posbias.config.sections.reproduction",
)


PACKAGE = Path(__file__).resolve().parents[1]  # src/posbias


def stage_modules(role: str) -> list[str]:
    """`posbias.<stage>.<role>` of every stage in `STAGES` that has that module, in its order (found by its file,
    so that no stage's package is imported here)."""
    return [f"posbias.{stage}.{role}" for stage in STAGES if (PACKAGE / stage / f"{role}.py").exists()]


def section_modules() -> list[str]:
    """Every config section's module, in the order of derivations and checks."""
    return [*SECTION_MODULES, *stage_modules("config"), *LAST_SECTION_MODULES]


def declared_sections(module) -> tuple[Section, ...]:
    """A module's `SECTIONS` (a stage's folder may declare several, in their order), else its one `SECTION`."""
    return tuple(getattr(module, "SECTIONS", None) or (module.SECTION,))


@lru_cache(maxsize=1)
def sections() -> dict[str, Section]:
    """key -> Section, in the registry's order."""
    declared = [section for name in section_modules() for section in declared_sections(importlib.import_module(name))]
    return {section.key: section for section in declared}


def stage_rules(workflow_dir: str | Path) -> list[str]:
    """Each stage's rules file that exists, `rules/<stage>.smk` relative to the workflow's directory, in `STAGES`
    order: what the Snakefile includes."""
    return [f"rules/{stage}.smk" for stage in STAGES if (Path(workflow_dir) / "rules" / f"{stage}.smk").exists()]


def reported_name(stage: str) -> str:
    """The list of targets a stage's rules file adds to `rule all`, if it defines one: `SWEEP_REPORTED`."""
    return f"{stage.upper()}_REPORTED"
