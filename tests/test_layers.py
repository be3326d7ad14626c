"""The package's layers, read from its source: a module imports only from its own layer or the layers below it
(function-level imports included), the top-level packages import one another without a cycle, the modules inside
each package import one another without a cycle, and no stage imports another stage but for its `paths` (what two
stages share lives in the domain layer).

    foundation     errors, disk_space, io, logs, device, gpu_pool, settings, names, backbones, loaded_weights,
                   remote_code, outputs, plugins, staging
    domain         data, retrieval, rankers, training, llm, stats, evaluation, reading, docred, scoring, judges
    reporting      reporting
    analyses       each analysis stage's own modules (litm, probes, positions, sweep, audit, farrelevant, rerank: a
                   stage folder not placed above), regression, reproduction, expected_values
    orchestration  config, provenance, workflow_lock, planning, workflow, and every stage's config, paths and steps
                   (litm.config, data.steps, ...)
    interface      cli, command_flags, every stage's cli (litm.cli, data.cli, ...) and integrations (posbias in
                   other tools' pipelines: PyTerrier)
                   (and scripts/ and rules/, outside the package)

A stage is a folder holding one of the role modules `config.py`, `paths.py`, `steps.py`, `cli.py` or `report.py`;
each role module is a unit of its own, placed by its name (config, paths and steps in orchestration, cli in
interface, report among the analyses or in its folder's layer where that is higher: evaluation.report, which
renders the study's tables through reporting, against planning.report in orchestration). The
folder's other modules are placed with the folder: where LAYERS puts it (the study's stages are folders of the
domain packages: data/steps.py beside data/synthetic.py), else among the analyses. Another stage may import a
domain folder's own modules (the sweep reads `posbias.data.placement`) and a stage's `paths` (where its files are:
the probes read `posbias.training.paths` for a checkpoint), but never a stage's other role modules or an analysis
folder's modules. A new stage needs no edit here; a new top-level module or package of another kind must
be given a layer: the test fails until it is.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "posbias"

# `report` (a stage's tables and figures) sits among the analyses, or in its folder's layer where that is higher
# (planning's plan table).
STAGE_ROLES = {"config": "orchestration", "paths": "orchestration", "steps": "orchestration", "cli": "interface",
               "report": "analyses"}
LAYERS = (  # the top-level units of each layer; the stages' folders and role modules are added by `layers`
    ("foundation", {"errors", "disk_space", "io", "logs", "device", "gpu_pool", "settings", "names", "backbones",
                    "loaded_weights", "remote_code", "outputs", "plugins", "staging"}),
    ("domain", {"data", "retrieval", "rankers", "training", "llm", "stats", "evaluation", "reading", "docred",
                "scoring", "judges"}),
    ("reporting", {"reporting"}),
    ("analyses", {"regression", "reproduction", "expected_values"}),
    ("orchestration", {"config", "provenance", "workflow_lock", "planning", "workflow"}),
    ("interface", {"cli", "command_flags", "integrations"}),
)
ROOT = "posbias"  # the package's own __init__ (its version): importable from every layer


def stages_of(package: Path) -> frozenset[str]:
    """The stages: the package's folders that hold a role module (`config.py`, `paths.py`, `steps.py`, `cli.py`,
    `report.py`)."""
    return frozenset(p.parent.name for role in STAGE_ROLES for p in package.glob(f"*/{role}.py"))


def placed_units() -> set[str]:
    return {unit for _, units in LAYERS for unit in units}


def analysis_stages(stages: frozenset[str]) -> frozenset[str]:
    """The stages whose own modules are analyses: the folders LAYERS does not place (litm, sweep, ...)."""
    return stages - placed_units()


def layers(stages: frozenset[str]) -> tuple[tuple[str, set[str]], ...]:
    """LAYERS with each analysis stage's folder among the analyses and every stage's role modules (`litm.steps`,
    `data.steps`) in their layers."""
    names = [name for name, _ in LAYERS]
    folder_layer = {unit: name for name, units in LAYERS for unit in units}

    def role_layer(stage: str, role: str) -> str:
        own = folder_layer.get(stage, "analyses")
        return max(STAGE_ROLES[role], own, key=names.index) if role == "report" else STAGE_ROLES[role]

    roles = {name: {f"{s}.{r}" for s in stages for r in STAGE_ROLES if role_layer(s, r) == name} for name in names}
    return tuple((name, units | roles[name] | (analysis_stages(stages) if name == "analyses" else set()))
                 for name, units in LAYERS)


def stage_unit(parts: list[str], stages: frozenset[str]) -> str | None:
    """`litm.steps` for the parts litm, steps(.py) of a stage's orchestration or interface module, else None."""
    if len(parts) >= 2 and parts[0] in stages and parts[1].removesuffix(".py") in STAGE_ROLES:
        return f"{parts[0]}.{parts[1].removesuffix('.py')}"
    return None


def unit_of(path: Path, package: Path, stages: frozenset[str]) -> str:
    """The top-level module or subpackage a source file belongs to (`rankers` for rankers/heads/x.py), or a
    stage's role module (`litm.steps`)."""
    parts = list(path.relative_to(package).parts)
    first = parts[0]
    return ROOT if first == "__init__.py" else stage_unit(parts, stages) or first.removesuffix(".py")


def imported_units(tree: ast.AST, known: set[str], stages: frozenset[str]) -> set[str]:
    """The top-level units of posbias a module imports, at any depth of its code (lazy imports count)."""
    units = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = node.module.split(".")
            if names[0] != ROOT:
                continue
            if len(names) > 2 and stage_unit(names[1:3], stages):
                units.add(stage_unit(names[1:3], stages))
            elif len(names) == 2 and names[1] in stages:  # `from posbias.litm import steps, files`
                units.update(stage_unit([names[1], a.name], stages) or names[1] for a in node.names)
            elif len(names) > 1:
                units.add(names[1])
            else:  # `from posbias import io`: the names are the units
                units.update(a.name if a.name in known else ROOT for a in node.names)
        elif isinstance(node, ast.Import):
            units.update((stage_unit(a.name.split(".")[1:3], stages) or a.name.split(".")[1]) if "." in a.name else ROOT
                         for a in node.names if a.name.split(".")[0] == ROOT)
    return units


def import_graph(package: Path) -> dict[str, dict[str, list[str]]]:
    """{unit: {imported unit: [the files importing it]}}, a unit's imports of itself left out."""
    stages = stages_of(package)
    known = {unit_of(p, package, stages) for p in package.iterdir()
             if p.suffix == ".py" or (p / "__init__.py").exists()}
    graph: dict[str, dict[str, list[str]]] = {}
    for path in sorted(package.rglob("*.py")):
        unit = unit_of(path, package, stages)
        graph.setdefault(unit, {})
        for target in imported_units(ast.parse(path.read_text(encoding="utf-8")), known, stages) - {unit}:
            graph[unit].setdefault(target, []).append(str(path.relative_to(package)))
    return graph


def layer_violations(graph: dict[str, dict[str, list[str]]], stages: frozenset[str]) -> list[str]:
    placed = layers(stages)
    rank = {unit: rank for rank, (_, units) in enumerate(placed) for unit in units}
    found = []
    for unit, targets in graph.items():
        for target, files in targets.items():
            if target == ROOT:
                continue
            if unit not in rank or target not in rank:
                found.append(f"{unit if unit not in rank else target}: no layer (add it to LAYERS)")
            elif rank[target] > rank[unit]:
                found.append(f"{unit} ({placed[rank[unit]][0]}) imports {target} ({placed[rank[target]][0]}) "
                             f"in {', '.join(files)}")
    return sorted(set(found))


def cycles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """Every import cycle between units, each once, as found by a depth-first search."""
    found, state = [], {}

    def visit(unit: str, path: list[str]) -> None:
        state[unit] = "open"
        for target in sorted(graph.get(unit, {})):
            if state.get(target) == "open":
                found.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[unit] = "done"

    for unit in sorted(graph):
        if unit not in state:
            visit(unit, [unit])
    return found



def module_name(path: Path, package: Path) -> str:
    """`posbias.litm.steps` for litm/steps.py, `posbias.audit.corpus` for audit/corpus/__init__.py."""
    parts = list(path.relative_to(package).with_suffix("").parts)
    return ".".join([ROOT, *(parts[:-1] if parts[-1] == "__init__" else parts)])


def module_graph(package: Path) -> dict[str, dict[str, list[str]]]:
    """{module: {imported module of the same top-level package: [the importing file]}}: the imports inside each
    package (`from posbias.litm import kv` is the module posbias.litm.kv; a package's own __init__ is a module)."""
    modules = {module_name(path, package): path for path in sorted(package.rglob("*.py"))}
    graph: dict[str, dict[str, list[str]]] = {}
    for name, path in modules.items():
        graph[name] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                           for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                inside = target.split(".")[:2] == name.split(".")[:2] and max(len(name.split(".")),
                                                                              len(target.split("."))) > 2
                if inside and target != name and target in modules:
                    graph[name].setdefault(target, []).append(str(path.relative_to(package)))
    return graph


def stage_of(unit: str, stages: frozenset[str]) -> str | None:
    """The stage a unit belongs to (`litm` for litm and litm.steps, `data` for data.steps), else None (`data`
    itself: a domain folder's own modules belong to no stage)."""
    folder = unit.split(".")[0]
    if folder not in stages:
        return None
    return folder if "." in unit or folder in analysis_stages(stages) else None


SHARED_ROLE = "paths"  # a stage's file locations: what another stage reads of it


def stage_imports(graph: dict[str, dict[str, list[str]]], stages: frozenset[str]) -> list[str]:
    """Every import of one stage's module by another stage's (its `paths` aside): what two stages share belongs in
    the domain layer."""
    return sorted(f"{unit} imports {target} in {', '.join(files)}" for unit, targets in graph.items()
                  for target, files in targets.items()
                  if stage_of(unit, stages) and stage_of(target, stages) not in (None, stage_of(unit, stages))
                  and not target.endswith(f".{SHARED_ROLE}"))


def checked_graph(package: Path) -> dict[str, dict[str, list[str]]]:
    """The unit graph of `package`, refused when it holds no import at all (a wrong path, or a parser that no
    longer sees imports, would otherwise pass every check here)."""
    graph = import_graph(package)
    assert any(graph.values()), f"no import between the units of {package}: nothing was checked"
    return graph

def test_every_module_imports_only_from_its_own_layer_or_below():
    assert layer_violations(checked_graph(PACKAGE), stages_of(PACKAGE)) == []


def test_the_top_level_packages_import_one_another_without_a_cycle():
    assert cycles(checked_graph(PACKAGE)) == []



def test_no_stage_imports_another_stage():
    assert stage_imports(checked_graph(PACKAGE), stages_of(PACKAGE)) == []


def test_the_modules_inside_each_package_import_one_another_without_a_cycle():
    assert cycles(module_graph(PACKAGE)) == []

def write_package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.mark.parametrize("lazy", [False, True])
def test_a_lower_layer_importing_a_higher_one_is_found(tmp_path, lazy):
    body = "    from posbias.reporting.render import latex_table\n" if lazy else \
        "from posbias.reporting.render import latex_table\n"
    package = write_package(tmp_path, {
        "__init__.py": "", "io.py": "from posbias import errors\n", "errors.py": "",
        "reporting/__init__.py": "", "reporting/render.py": "from posbias.io import atomic_write\n",
        "rankers/__init__.py": "", "rankers/base.py": ("def caption():\n" if lazy else "") + body})
    assert layer_violations(import_graph(package), stages_of(package)) == [
        "rankers (domain) imports reporting (reporting) in rankers/base.py"]


def test_a_cycle_between_packages_of_one_layer_is_found_and_an_unplaced_module_is_named(tmp_path):
    package = write_package(tmp_path, {
        "__init__.py": "", "rankers/__init__.py": "from posbias.training import loop\n",
        "training/__init__.py": "", "training/loop.py": "from posbias.rankers import base\n",
        "rankers/base.py": "", "extras.py": "from posbias import io\n", "io.py": ""})
    graph = import_graph(package)
    assert cycles(graph) == [["rankers", "training", "rankers"]]
    assert layer_violations(graph, stages_of(package)) == ["extras: no layer (add it to LAYERS)"]


def test_a_stages_orchestration_modules_are_units_of_their_own(tmp_path):
    """A folder with a config.py is a stage, placed without a table edit: litm/steps.py may import the config
    layer; litm/files.py (an analysis) may not import litm/steps.py."""
    package = write_package(tmp_path, {
        "__init__.py": "", "config/__init__.py": "", "litm/__init__.py": "", "litm/config.py": "",
        "litm/steps.py": "from posbias.config import load_config\nfrom posbias.litm import files\n",
        "litm/files.py": "from posbias.litm import steps\n", "litm/cli.py": "import posbias.litm.steps\n"})
    graph = import_graph(package)
    assert graph["litm.cli"] == {"litm.steps": ["litm/cli.py"]}
    assert stages_of(package) == {"litm"}
    assert layer_violations(graph, stages_of(package)) == [
        "litm (analyses) imports litm.steps (orchestration) in litm/files.py"]


def test_a_stage_importing_another_stage_is_found(tmp_path):
    """audit/batteries.py (an analysis) reaching into the sweep's stats, and the audit's steps into litm's: both
    named; the audit's steps importing its own batteries is not."""
    package = write_package(tmp_path, {
        "__init__.py": "", "audit/__init__.py": "", "audit/config.py": "", "sweep/__init__.py": "",
        "sweep/config.py": "", "sweep/stats.py": "", "litm/__init__.py": "", "litm/config.py": "", "litm/steps.py": "",
        "audit/batteries.py": "def chance():\n    from posbias.sweep.stats import expected_random\n",
        "audit/steps.py": "from posbias.audit import batteries\nfrom posbias.litm import steps\n"})
    assert stage_imports(import_graph(package), stages_of(package)) == [
        "audit imports sweep in audit/batteries.py", "audit.steps imports litm.steps in audit/steps.py"]


def test_a_domain_folders_own_modules_are_shared_but_its_stage_is_not(tmp_path):
    """data/ is a domain package and the data stage's folder: the sweep may read data/placement.py, not
    data/steps.py; data/steps.py is orchestration, so data/placement.py may not import it."""
    package = write_package(tmp_path, {
        "__init__.py": "", "data/__init__.py": "", "data/placement.py": "from posbias.data import steps\n",
        "data/steps.py": "from posbias.data import placement\n", "data/cli.py": "from posbias.data import steps\n",
        "sweep/__init__.py": "", "sweep/config.py": "",
        "sweep/steps.py": "from posbias.data.placement import place\nfrom posbias.data.steps import generate\n",
        "sweep/paths.py": "from posbias.data.paths import docs\n", "data/paths.py": ""})
    graph = import_graph(package)
    stages = stages_of(package)
    assert stages == {"data", "sweep"}
    assert stage_imports(graph, stages) == ["sweep.steps imports data.steps in sweep/steps.py"]
    assert layer_violations(graph, stages) == ["data (domain) imports data.steps (orchestration) in data/placement.py"]


def test_a_cycle_inside_a_package_is_found(tmp_path):
    package = write_package(tmp_path, {
        "__init__.py": "", "retrieval/__init__.py": "", "retrieval/other.py": "from posbias.retrieval import dense\n",
        "retrieval/dense.py": "from posbias.retrieval.network import load\n",
        "retrieval/network.py": "def load():\n    from posbias.retrieval.dense import Settings\n"})
    assert cycles(module_graph(package)) == [
        ["posbias.retrieval.dense", "posbias.retrieval.network", "posbias.retrieval.dense"]]


def test_an_empty_import_graph_is_refused(tmp_path):
    package = write_package(tmp_path, {"__init__.py": "", "io.py": "import json\n", "errors.py": ""})
    with pytest.raises(AssertionError, match="no import between the units"):
        checked_graph(package)
