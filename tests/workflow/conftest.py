"""The tiny config's finished run, shared by every test that reads it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from filelock import FileLock

from snakemake_runs import TARGETS, run_snakemake, tiny_config, write_config


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory, request) -> Path:
    """A working directory where `snakemake all` has run on the tiny config: built once per test session. Under
    pytest-xdist each worker has its own temporary directory inside the session's, so the run is built there,
    under a lock: the first worker to ask builds it, a later one waits and reads the same run (the config names
    the builder's tiny BERT, which lives as long as the session's directory). Tests read it and run dry runs on
    it (their changed configs written elsewhere); one that runs jobs works in a `copy_of_run`."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    work, built, failed = shared / "tiny-run", shared / "tiny-run.done", shared / "tiny-run.failed"
    with FileLock(shared / "tiny-run.lock"):
        if failed.exists():  # one failed build is reported by every worker, not repeated
            pytest.fail(failed.read_text(), pytrace=False)
        if not built.exists():
            work.mkdir()
            write_config(work, tiny_config(request.getfixturevalue("tiny_backbone")))
            try:
                run_snakemake(work, "-j", "2", *TARGETS)
            except Exception as error:
                failed.write_text(f"the tiny run in {work} failed: {error}")
                raise
            built.touch()
    return work
