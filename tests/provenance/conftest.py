"""The provenance tests' own content-hash cache."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Content hashes are cached per machine: each test gets its own cache."""
    monkeypatch.setenv("POSBIAS_CACHE", str(tmp_path / "posbias-cache"))
