"""What the package reads besides its code (schema fragments, the layouts' schemas, templates, the shipped corpus,
the planning tables) ships in a wheel: every such file under src/posbias matches a glob of pyproject.toml's
package data, which setuptools reads relative to the package, one `*` per path part."""

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "posbias"


def matches(path: str, pattern: str) -> bool:
    parts, globs = path.split("/"), pattern.split("/")
    return len(parts) == len(globs) and all(fnmatch.fnmatchcase(p, g) for p, g in zip(parts, globs))


def test_every_data_file_of_the_package_is_package_data():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["posbias"]
    data = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*")
                  if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts)
    assert "evaluation/table_layouts/baseline.schema.yaml" in data
    assert [path for path in data if not any(matches(path, g) for g in globs)] == []


def test_a_glob_matches_one_level_only():
    assert matches("audit/config.schema.yaml", "*/*.schema.yaml")
    assert not matches("evaluation/table_layouts/baseline.schema.yaml", "*/*.schema.yaml")
