"""The staging tests' run directory (the working directory, online, with its own Hugging Face cache) and stand-in
hub (hub_fakes.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hub_fakes import FakeHub

OFFLINE_SWITCHES = ("POSBIAS_OFFLINE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE",
                    "POSBIAS_REVISIONS", "POSBIAS_STAGE_CONFIG", "POSBIAS_STAGING_LOCK")


@pytest.fixture
def run_dir(tmp_path, monkeypatch) -> Path:
    """An empty run directory as the working directory (where results/staging.lock.yaml goes), online, with its
    own hub cache."""
    for variable in OFFLINE_SWITCHES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    work = tmp_path / "run"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.fixture
def fake_hub(run_dir, monkeypatch):
    def install(repositories) -> FakeHub:
        return FakeHub(repositories).install(monkeypatch)
    return install


