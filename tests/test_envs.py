"""The conda environment for cluster users pins the same versions as the lock file."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def pins(lines):
    return {name.lower().replace("_", "-"): version for name, _, version in
            (line.strip().partition("==") for line in lines) if version}


def test_conda_env_matches_lock():
    lock = pins((ROOT / "requirements.lock").read_text().splitlines())
    env = yaml.safe_load((ROOT / "envs" / "posbias.yaml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    for name, version in pins(pip_section).items():
        assert lock.get(name) == version, f"{name}: env pins {version}, lock has {lock.get(name)}"
