"""The package as users install it. What it reads besides its code (schema fragments, the layouts' schemas,
templates, the shipped corpus, the planning tables, the stylesheet) ships in a wheel: every such file under
src/posbias matches a glob of pyproject.toml's package data, which setuptools reads relative to the package, one `*`
per path part. The wheel and the sdist, built as a user builds them, pass `twine check --strict`, carry the workflow,
the licence and the changelog; installed into a fresh environment, the wheel audits a model from an empty directory
as the checkout does and plans the workflow without the clone."""

import fnmatch
import json
import os
import subprocess
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from distributions import VENV_BIN, build, locked_environment, one, user_environment

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


# --- the built distributions: what `pip install posbias-*.whl` gives a user without the clone ---------------------

WORKFLOW_FILES = "posbias/workflow/files"


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("dist"))


def test_the_wheel_and_the_sdist_pass_twine_check(dist):
    checked = subprocess.run([VENV_BIN / "twine", "check", "--strict", *sorted(dist.glob("posbias-*"))],
                             capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2


def test_the_wheel_carries_the_workflow_and_its_metadata(dist):
    from posbias import __version__

    wheel = one(dist, f"posbias-{__version__}-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(f"posbias-{__version__}.dist-info/METADATA").decode()
    tracked = subprocess.run(["git", "ls-files", "rules", "scripts", "report", "profiles", "config",
                              "benchmarks/tables", "benchmarks/gpu"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    expected = {f"{WORKFLOW_FILES}/{name}" for name in tracked + ["Snakefile", "config.yaml", "envs/posbias.yaml"]
                if not (ROOT / name).is_symlink()}
    assert expected - names == set()
    assert not any(name.startswith(f"{WORKFLOW_FILES}/scripts/posbias/") for name in names)  # the link, not copied
    assert f"posbias-{__version__}.dist-info/licenses/LICENSE" in names
    assert "License-Expression: MIT" in metadata and f"Version: {__version__}" in metadata


def test_the_sdist_holds_the_licence_changelog_and_lock(dist):
    from posbias import __version__

    with tarfile.open(one(dist, f"posbias-{__version__}.tar.gz")) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"LICENSE", "CHANGELOG.md", "requirements.lock", "Snakefile", "setup.py", "MANIFEST.in"} <= names
    assert not any(name.startswith("scripts/posbias/") for name in names)


def test_the_changelog_names_this_version():
    from posbias import __version__

    assert f"## {__version__} " in (ROOT / "CHANGELOG.md").read_text()


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory) -> Path:
    """A fresh environment outside the repository with the built wheel installed; `pip check` then verifies the
    wheel's declared dependencies are all met by the locked ones."""
    venv = locked_environment(tmp_path_factory.mktemp("fresh") / "venv")
    subprocess.run([VENV_BIN / "uv", "pip", "install", "--quiet", "--python", venv / "bin" / "python", "--no-deps",
                    one(dist, "posbias-*.whl")], check=True)
    problems = subprocess.run([venv / "bin" / "pip", "check"], capture_output=True, text=True).stdout
    assert "posbias" not in problems, problems
    return venv


def run_in(directory: Path, command: list, **options) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=directory, capture_output=True, text=True, env=user_environment(), **options)


@pytest.mark.slow
def test_the_installed_wheel_audits_a_model_from_an_empty_directory_as_the_checkout_does(installed, tmp_path):
    audit = ["audit", "--model", "bi-encoder:offline:all-MiniLM-L6-v2", "--out", "audits", "--battery", "sweep"]
    summaries = {}
    for where, posbias in (("installed", installed / "bin" / "posbias"), ("checkout", VENV_BIN / "posbias")):
        (tmp_path / where).mkdir()
        done = run_in(tmp_path / where, [posbias, *audit])
        assert done.returncode == 0, done.stderr[-2000:]
        record = json.loads(next((tmp_path / where / "audits").glob("*/sweep.json")).read_text())
        summaries[where] = record["summary"]
        assert (record["environment"]["code"]["root"] == str(ROOT)) == (where == "checkout")
    assert summaries["installed"] == summaries["checkout"]
    assert summaries["installed"]["best"] > 0.5  # a real curve, not an empty one


@pytest.mark.slow
def test_the_installed_wheel_sets_up_and_plans_the_workflow_without_the_clone(installed, tmp_path):
    posbias = installed / "bin" / "posbias"
    root = run_in(tmp_path, [posbias, "workflow", "path"], check=True).stdout.strip()
    assert root.startswith(str(installed)) and root.endswith(WORKFLOW_FILES)
    run_in(tmp_path, [posbias, "workflow", "init", "study"], check=True)
    assert (tmp_path / "study" / "config.yaml").read_text() == (ROOT / "config.yaml").read_text()
    dry = run_in(tmp_path, [posbias, "workflow", "run", "study", "-n", "results/table1.tex"])
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert "rule table1:" in dry.stdout + dry.stderr and not (tmp_path / "study" / "results").exists()
    plan = run_in(tmp_path / "study", [posbias, "plan", "--config", "config.yaml", "results/table1.tex"])
    assert plan.returncode == 0, plan.stderr[-2000:]
    assert "table1" in plan.stdout
