"""The worked examples of docs/extending.md run as the page shows them: each example's files are written into a
scratch copy of the repository, then the toy ranker's, table's, backend's and battery's tests run there, and the
toy table and the toy stage are built on the tiny config's finished run (only their own jobs run) and the stage's
command writes the same table by hand."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from snakemake_runs import ROOT, copy_of_run, run_snakemake, scheduled_jobs

sys.path.insert(0, str(ROOT / "tests"))
from test_readme import copy_of_repository  # noqa: E402

pytestmark = pytest.mark.slow  # the tiny run it reads takes minutes, unless another test built it already

PAGE = ROOT / "docs" / "extending.md"
# `<!-- example: KIND PATH -->` before a fenced block: the block is the file PATH; with `into NAME`, its lines go
# into the tuple NAME of the file PATH (a registry line).
EXAMPLE = re.compile(r"^<!-- example: (\S+) (\S+)(?: into (\w+))? -->\n(`{3,})\w*\n(.*?)\n\4$", flags=re.M | re.S)


def examples(text: str) -> dict[str, list[tuple[str, str | None, str]]]:
    """kind -> [(path, the tuple it goes into or None, text)], in page order."""
    found: dict[str, list[tuple[str, str | None, str]]] = {}
    for kind, path, into, _, body in EXAMPLE.findall(text):
        found.setdefault(kind, []).append((path, into or None, body + "\n"))
    return found


def write_example(repository: Path, path: str, into: str | None, text: str) -> None:
    target = repository / path
    if into is None:
        assert not target.exists(), f"{path}: the example would replace a file of the repository"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return
    source = target.read_text(encoding="utf-8")
    start = source.index(f"{into} = (\n")
    end = source.index("\n)\n", start)
    target.write_text(source[:end + 1] + text + source[end + 1:], encoding="utf-8")


def test_the_page_has_the_five_examples_and_their_files():
    found = examples(PAGE.read_text(encoding="utf-8"))
    assert {kind: [path for path, _, _ in files] for kind, files in found.items()} == {
        "toy-ranker": ["src/posbias/rankers/declarations/minp.py", "tests/rankers/test_minp.py"],
        "toy-backend": ["src/posbias/llm/backends/shout.py", "src/posbias/llm/declarations/shout.py",
                        "tests/llm/test_backends_shout.py"],
        "toy-table": ["config/examples/dev_table.yaml", "tests/test_dev_table.py"],
        "toy-battery": ["src/posbias/audit/battery_declarations/edges.py", "tests/audit/test_edges.py"],
        "toy-stage": [*(f"src/posbias/lengths/{name}" for name in ("__init__.py", "config.schema.yaml", "config.py",
                                                                    "paths.py", "steps.py", "cli.py")),
                      "rules/lengths.smk", "src/posbias/config/registry.py", "docs/stages/lengths.md"]}


@pytest.fixture(scope="module")
def extended(tmp_path_factory) -> Path:
    """A copy of the repository with every example's files written."""
    repository = copy_of_repository(tmp_path_factory.mktemp("extended") / "repository")
    for files in examples(PAGE.read_text(encoding="utf-8")).values():
        for path, into, text in files:
            write_example(repository, path, into, text)
    return repository


def environment(repository: Path) -> dict[str, str]:
    """The copy's package first on the path (the environment's own posbias is this checkout's)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(repository / "src"), os.environ.get("PYTHONPATH", "")])}


def test_the_toy_ranker_table_backend_and_battery_tests_pass_in_the_copy(extended):
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                             "tests/rankers/test_minp.py", "tests/test_dev_table.py",
                             "tests/llm/test_backends_shout.py", "tests/audit/test_edges.py"],
                            cwd=extended, env=environment(extended), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:]
    assert "6 passed" in result.stdout


def test_the_toy_table_and_the_toy_stage_build_on_the_tiny_run(extended, finished_run, tmp_path):
    run, env = copy_of_run(finished_run, tmp_path / "run"), environment(extended)
    # Outputs older than their inputs rerun, nothing else: the copy's rules and scripts sit at another path, which
    # Snakemake's code trigger would take for changed code.
    arguments = ("results/dev_table.md", "results/lengths.md", "--rerun-triggers", "mtime",
                 "--configfile", str(run / "config.yaml"), str(extended / "config" / "examples" / "dev_table.yaml"))
    dry = run_snakemake(run, "-n", *arguments, repository=extended, env=env)
    assert sorted(scheduled_jobs(dry.stdout)) == [("dev_table", ""), ("lengths", "")]  # nothing else reruns
    run_snakemake(run, "-j", "2", *arguments, repository=extended, env=env)
    assert "| MaxP |" in (run / "results" / "dev_table.md").read_text()
    assert "| synthetic | " in (run / "results" / "lengths.md").read_text()

    by_hand = subprocess.run([sys.executable, "-m", "posbias.cli", "lengths",
                              "--docs", "results/data/synthetic/docs.jsonl", "--out", str(tmp_path / "by-hand")],
                             cwd=run, env=env, capture_output=True, text=True, timeout=120)
    assert by_hand.returncode == 0, by_hand.stderr
    assert (tmp_path / "by-hand" / "lengths.md").read_text() == (run / "results" / "lengths.md").read_text()
