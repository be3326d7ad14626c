"""The built distributions and a fresh environment for them, shared by tests/test_packaging.py and
tests/test_quickstart.py (each test file builds its own: pytest-xdist runs them on different workers)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


def build(out: Path) -> Path:
    """A wheel and an sdist of the checkout in `out`, as a user's `uv build` (or `python -m build`) makes them: the
    sdist first, the wheel from it, so the sdist must hold everything setup.py copies into the wheel."""
    subprocess.run([VENV_BIN / "uv", "build", "--quiet", "--out-dir", out, ROOT], check=True)
    return out


def one(folder: Path, pattern: str) -> Path:
    (path,) = folder.glob(pattern)
    return path


def locked_environment(venv: Path) -> Path:
    """A fresh virtual environment holding the locked dependencies and pip, but not posbias: what `pip install` of
    the wheel would resolve, taken from uv's cache as `make env` takes it (torch first, from pip's find-links
    where this machine keeps its CPU build)."""
    uv = [VENV_BIN / "uv", "pip", "install", "--quiet", "--python", venv / "bin" / "python"]
    subprocess.run([VENV_BIN / "uv", "venv", "--quiet", "--python", sys.executable, "--seed", venv], check=True)
    links = os.environ.get("PIP_FIND_LINKS") or subprocess.run(
        [VENV_BIN / "pip", "config", "get", "global.find-links"], capture_output=True, text=True).stdout.strip()
    subprocess.run([*uv, *(["--find-links", links] if links else []), "torch==2.13.0"], check=True)
    subprocess.run([*uv, "--no-deps", "-r", ROOT / "requirements.lock"], check=True)
    return venv


def user_environment() -> dict:
    """The calling environment without what would point a command at this checkout or its .venv."""
    return {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
