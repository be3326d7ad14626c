"""The commands of README.md and of the docs' pages (docs/**/*.md) work as written.

Blocks are marked in a page by an HTML comment on the line before their ```bash fence:
- `<!-- walkthrough -->`: one part of the walk-through, on docs/getting-started.md only. The parts run in page
  order as one bash script, in a scratch directory ($WORK), with $REPO set to a copy of the repository;
- `<!-- paper_dry_runs -->`: the reproduction page's dry runs of the paper configs, run as written by
  tests/workflow/test_paper_configs.py, whose tests read their output (so they run once per suite);
- `<!-- runnable -->`: a block that runs on its own from a copy of the repository (dry runs, the config
  example);
- `<!-- cluster -->`: the steps of docs/cluster.md, which need a SLURM cluster: `make test-slurm` runs them in
  order (tests/slurm/run_cluster_test.sh);
- `<!-- quickstart -->`: the steps of docs/quickstart.md, from `pip install` of the wheel on: tests/test_quickstart.py
  runs them in order in a fresh environment.
Unmarked blocks need a GPU, the network, licensed data or much more time; their Snakemake commands are still
checked for the argument order Snakemake 9 needs.

Commands run with the test interpreter's directory first on PATH (the environment's `posbias` and
`snakemake`) and this checkout's `src/` first on PYTHONPATH. The copy of the repository stands in for a fresh
clone, so nothing is written into this checkout, and the walk-through is checked to write nothing into it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the walk-through takes minutes: make test starts this file first

REPO = Path(__file__).resolve().parents[1]
PAGES = {path: path.read_text(encoding="utf-8")
         for path in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]}
WALKTHROUGH_PAGE = REPO / "docs" / "getting-started.md"
MARKERS = ("walkthrough", "runnable", "paper_dry_runs", "cluster", "quickstart")
# What a copy of the repository leaves out: version control, environments and what runs write at the top
# (a run directory of the pages' commands included, and a built site), and caches anywhere.
NOT_COPIED_AT_TOP = {".git", ".venv", "results", "logs", ".snakemake", ".pytest_cache", "build", "paper", "cache",
                     "site"}
NOT_COPIED_ANYWHERE = shutil.ignore_patterns("__pycache__", "*.egg-info")
SHELL_OPERATORS = {"&&", "||", ";", "|", "&"}
OUTPUT_FLAGS = ("--out", "--run", "--index", "--per-query", ">")  # what a walk-through command writes
WALKTHROUGH_TIMEOUT_S = 600  # about 3 minutes on 2 busy cores


# --- reading the pages -----------------------------------------------------------------------------------

def marked_blocks(marker: str, pages: list[Path] | None = None) -> list[str]:
    return [block for page in (pages or PAGES) for block in
            re.findall(rf"^<!-- {marker} -->\n```bash\n(.*?)^```$", PAGES[page], flags=re.M | re.S)]


def bash_blocks() -> list[str]:
    return [block for text in PAGES.values() for block in re.findall(r"^```bash\n(.*?)^```$", text, flags=re.M | re.S)]


def inline_snakemake_commands() -> list[str]:
    return [command for text in PAGES.values()
            for command in re.findall(r"`(snakemake [^`]+)`", text.replace("\n", " "))]


def commands(script: str) -> list[list[str]]:
    """The simple commands of a script as word lists: continuation lines joined, comments dropped, split at
    `&&`, `;`, `|` and the like. Heredoc bodies are skipped."""
    found, heredoc_end = [], None
    for line in script.replace("\\\n", " ").splitlines():
        if heredoc_end is not None:
            heredoc_end = None if line.strip() == heredoc_end else heredoc_end
            continue
        words = shlex.split(line, comments=True)
        redirect = next((i for i, word in enumerate(words) if word.startswith("<<")), None)
        if redirect is not None:  # `<<EOF` or `<< EOF` (shlex has removed any quotes)
            heredoc_end = words[redirect][2:].lstrip("-") or words[redirect + 1]
            del words[redirect:]
        current: list[str] = []
        for word in words:
            if word in SHELL_OPERATORS:
                found.append(current)
                current = []
            else:
                current.append(word)
        found.append(current)
    return [words for words in found if words]


def misplaced_config_words(words: list[str]) -> list[str]:
    """Words Snakemake 9 would take as config files (after `--configfile`) or config items (after `--config`)
    that are neither: a target or another argument placed after them. A shell variable (`$CONFIG`) passes as a
    file: its value is set in the page (docs/cluster.md's commands run in make test-slurm)."""
    wrong, expecting = [], None
    for word in words[1:]:
        if word.startswith("-"):
            expecting = {"--configfile": "file", "--configfiles": "file", "--config": "item"}.get(word)
        elif expecting == "file" and not (word.endswith((".yaml", ".yml")) or re.fullmatch(r"\$\{?\w+\}?", word)):
            wrong.append(word)
        elif expecting == "item" and "=" not in word:
            wrong.append(word)
    return wrong


# --- running -----------------------------------------------------------------------------------------------

def copy_of_repository(destination: Path) -> Path:
    def ignored(directory: str, names: list[str]) -> set[str]:
        at_top = NOT_COPIED_AT_TOP.intersection(names) if Path(directory) == REPO else set()
        return at_top | NOT_COPIED_ANYWHERE(directory, names)

    shutil.copytree(REPO, destination, ignore=ignored)
    return destination


def environment(**variables: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO / "src"), env.get("PYTHONPATH", "")] if p)
    env.update(variables)
    return env


def run_bash(script: str, cwd: Path, env: dict[str, str], timeout: int) -> subprocess.CompletedProcess:
    result = subprocess.run(["bash", "-c", "set -euo pipefail\n" + script], cwd=cwd, env=env, text=True,
                            capture_output=True, timeout=timeout)
    assert result.returncode == 0, (f"exit status {result.returncode}\n--- script\n{script}\n"
                                    f"--- stderr (end)\n{result.stderr[-4000:]}")
    return result


def files_under(directory: Path) -> set[str]:
    return {str(path.relative_to(directory)) for path in directory.rglob("*")}


# --- the pages' structure ----------------------------------------------------------------------------------

def test_every_marker_sits_on_a_bash_block():
    for page, text in PAGES.items():
        lines, name = text.splitlines(), page.relative_to(REPO)
        for number, line in enumerate(lines):
            if re.fullmatch(r"<!-- \w+ -->", line.strip()):
                assert line.strip() in {f"<!-- {m} -->" for m in MARKERS}, f"{name}:{number + 1}: unknown marker"
                assert lines[number + 1] == "```bash", f"{name}:{number + 1}: a marker not followed by ```bash"
    assert len(marked_blocks("walkthrough", [WALKTHROUGH_PAGE])) >= 5 and marked_blocks("runnable")
    assert marked_blocks("walkthrough") == marked_blocks("walkthrough", [WALKTHROUGH_PAGE]), \
        "walk-through blocks belong on docs/getting-started.md"


def walkthrough_script() -> str:
    return "\n".join(marked_blocks("walkthrough", [WALKTHROUGH_PAGE]))


def test_walkthrough_names_its_config_and_has_no_placeholders():
    script = walkthrough_script()
    assert "..." not in script and not re.search(r"<[a-z_ -]+>", script)
    for words in commands(script):
        if words[0] == "posbias" and words[1] in ("generate", "farrelevant", "train", "dense-index", "hybrid"):
            assert "--config" in words, f"`{' '.join(words)}` would read ./config.yaml"


def test_order_check_finds_a_target_after_configfile():
    assert misplaced_config_words(shlex.split("snakemake -j 8 --configfile my.yaml results/table4.tex")) == [
        "results/table4.tex"]
    assert misplaced_config_words(shlex.split("snakemake -n --config experiment=x results/t.tex")) == ["results/t.tex"]
    assert misplaced_config_words(shlex.split("snakemake -n results/t.tex --configfile a.yaml b.yml -d p")) == []


def test_snakemake_targets_come_before_configfile():
    snakemake_commands = [words for block in bash_blocks() for words in commands(block) if words[0] == "snakemake"]
    snakemake_commands += [shlex.split(text) for text in inline_snakemake_commands()]
    assert len(snakemake_commands) >= 10
    for words in snakemake_commands:
        assert not misplaced_config_words(words), f"`{' '.join(words)}`: a target after --configfile"


# --- running the blocks ------------------------------------------------------------------------------------

def test_walkthrough_runs(tmp_path):
    clone, work, start = copy_of_repository(tmp_path / "clone"), tmp_path / "work", tmp_path / "start"
    start.mkdir()
    before = files_under(clone)
    script = walkthrough_script()

    result = run_bash(script, cwd=start, env=environment(REPO=str(clone), WORK=str(work)),
                      timeout=WALKTHROUGH_TIMEOUT_S)

    written = [words[words.index(flag) + 1] for words in commands(script) if words[0] == "posbias"
               for flag in OUTPUT_FLAGS if flag in words]
    assert len(written) >= 15
    for path in written:
        assert (work / path).exists(), f"{path}: named in the walk-through, not written"
    for words in commands(script):
        if words[:2] == ["posbias", "train"]:
            checkpoint = work / words[words.index("--out") + 1]
            assert {p.name for p in checkpoint.iterdir()} >= {"backbone", "ranker.pt", "ranker.json"}
    comparison = json.loads((work / "compare-dev.json").read_text())
    assert comparison["n_queries"] == 40 and comparison["metric"] == "RR@10" and comparison["outcomes"]["k"] == 5
    assert "relevant in top 5" in result.stdout and '"n_queries": 40' in result.stdout
    assert files_under(clone) == before, "the walk-through wrote into the repository"
    assert not any(start.iterdir()), "the walk-through wrote outside $WORK"


@pytest.mark.parametrize("block", [pytest.param(block, id=f"runnable-{i}")
                                   for i, block in enumerate(marked_blocks("runnable"))])
def test_runnable_block_runs(block, tmp_path):
    clone = copy_of_repository(tmp_path / "clone")
    run_bash(block, cwd=clone, env=environment(), timeout=300)


def test_the_cluster_page_has_its_seven_steps_for_make_test_slurm():
    """tests/slurm/run_cluster_test.sh runs docs/cluster.md's marked blocks as set up, stage, plan, submit, watch,
    resume and collect, in that order: a block added or dropped there must be added to that script too."""
    page = REPO / "docs" / "cluster.md"
    blocks = marked_blocks("cluster", [page])
    assert len(blocks) == 7 and len(marked_blocks("cluster")) == 7
    script = (REPO / "tests" / "slurm" / "run_cluster_test.sh").read_text()
    assert "STEPS=(setup stage plan submit watch resume collect)" in script
    assert "posbias stage" in blocks[1] and "posbias plan" in blocks[2] and "snakemake --profile" in blocks[3]
    assert "unlock-stale" in blocks[5] and "--rerun-incomplete" in blocks[5]
