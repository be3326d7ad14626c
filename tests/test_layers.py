"""The package's layers, read from its source: a module imports only from its own layer or the layers below it
(function-level imports included), and the top-level packages import one another without a cycle.

    foundation     errors, io, logs, device, settings, names, backbones
    domain         data, retrieval, rankers, training, llm, stats, evaluation
    reporting      reporting
    analyses       litm, probes, positions, sweep, regression
    orchestration  config, provenance, steps
    interface      cli   (and scripts/ and rules/, outside the package)

A new top-level module or package must be given a layer here: the test fails until it is.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "posbias"

LAYERS = (
    ("foundation", {"errors", "io", "logs", "device", "settings", "names", "backbones"}),
    ("domain", {"data", "retrieval", "rankers", "training", "llm", "stats", "evaluation"}),
    ("reporting", {"reporting"}),
    ("analyses", {"litm", "probes", "positions", "sweep", "regression"}),
    ("orchestration", {"config", "provenance", "steps"}),
    ("interface", {"cli"}),
)
RANK = {unit: rank for rank, (_, units) in enumerate(LAYERS) for unit in units}
ROOT = "posbias"  # the package's own __init__ (its version): importable from every layer


def unit_of(path: Path, package: Path) -> str:
    """The top-level module or subpackage a source file belongs to (`rankers` for rankers/heads/x.py)."""
    first = path.relative_to(package).parts[0]
    return ROOT if first == "__init__.py" else first.removesuffix(".py")


def imported_units(tree: ast.AST, known: set[str]) -> set[str]:
    """The top-level units of posbias a module imports, at any depth of its code (lazy imports count)."""
    units = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = node.module.split(".")
            if names[0] != ROOT:
                continue
            if len(names) > 1:
                units.add(names[1])
            else:  # `from posbias import io`: the names are the units
                units.update(a.name if a.name in known else ROOT for a in node.names)
        elif isinstance(node, ast.Import):
            units.update(a.name.split(".")[1] if "." in a.name else ROOT for a in node.names
                         if a.name.split(".")[0] == ROOT)
    return units


def import_graph(package: Path) -> dict[str, dict[str, list[str]]]:
    """{unit: {imported unit: [the files importing it]}}, a unit's imports of itself left out."""
    known = {unit_of(p, package) for p in package.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    graph: dict[str, dict[str, list[str]]] = {}
    for path in sorted(package.rglob("*.py")):
        unit = unit_of(path, package)
        graph.setdefault(unit, {})
        for target in imported_units(ast.parse(path.read_text(encoding="utf-8")), known) - {unit}:
            graph[unit].setdefault(target, []).append(str(path.relative_to(package)))
    return graph


def layer_violations(graph: dict[str, dict[str, list[str]]]) -> list[str]:
    found = []
    for unit, targets in graph.items():
        for target, files in targets.items():
            if target == ROOT:
                continue
            if unit not in RANK or target not in RANK:
                found.append(f"{unit if unit not in RANK else target}: no layer (add it to LAYERS)")
            elif RANK[target] > RANK[unit]:
                found.append(f"{unit} ({LAYERS[RANK[unit]][0]}) imports {target} ({LAYERS[RANK[target]][0]}) "
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


def test_every_module_imports_only_from_its_own_layer_or_below():
    assert layer_violations(import_graph(PACKAGE)) == []


def test_the_top_level_packages_import_one_another_without_a_cycle():
    assert cycles(import_graph(PACKAGE)) == []


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
    assert layer_violations(import_graph(package)) == [
        "rankers (domain) imports reporting (reporting) in rankers/base.py"]


def test_a_cycle_between_packages_of_one_layer_is_found_and_an_unplaced_module_is_named(tmp_path):
    package = write_package(tmp_path, {
        "__init__.py": "", "rankers/__init__.py": "from posbias.training import loop\n",
        "training/__init__.py": "", "training/loop.py": "from posbias.rankers import base\n",
        "rankers/base.py": "", "extras.py": "from posbias import io\n", "io.py": ""})
    graph = import_graph(package)
    assert cycles(graph) == [["rankers", "training", "rankers"]]
    assert layer_violations(graph) == ["extras: no layer (add it to LAYERS)"]
