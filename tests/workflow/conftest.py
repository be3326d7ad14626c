"""The tiny config's finished run, shared by every test that reads it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from filelock import FileLock

from no_network import offline_environment
from snakemake_runs import TARGETS, run_snakemake, stage, tiny_config, write_config


SIMULATED_GPUS = "0,1"


def simulated_gpus(pool: Path) -> dict[str, str]:
    """The environment of a machine whose GPUs are `SIMULATED_GPUS`, its pool's lock files in `pool`: the jobs
    claim devices, then run on the CPU (torch sees none, and is told that is expected)."""
    return {**os.environ, "CUDA_VISIBLE_DEVICES": SIMULATED_GPUS, "POSBIAS_GPU_POOL": str(pool),
            "POSBIAS_CPU_DESPITE_ALLOTTED_GPU": "1"}


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory, request) -> Path:
    """A working directory where `snakemake all` has run on the tiny config: built once per test session. Under
    pytest-xdist each worker has its own temporary directory inside the session's, so the run is built there,
    under a lock: the first worker to ask builds it, a later one waits and reads the same run (the config names
    the builder's tiny BERT, which lives as long as the session's directory). Tests read it and run dry runs on
    it (their changed configs written elsewhere); one that runs jobs works in a `copy_of_run`.

    It runs as on a machine with two GPUs (`SIMULATED_GPUS`): every GPU job claims one from the pool
    (posbias.gpu_pool) and computes on the CPU all the same; tests/workflow/test_gpu_jobs.py reads its logs. And as
    on a cluster's compute node without internet: `posbias stage` first (its table in stage.txt), then every process
    with the network blocked and POSBIAS_OFFLINE=1 (no_network.py; tests/workflow/test_offline_run.py)."""
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
                offline = offline_environment(simulated_gpus(shared / "gpu-pool"), shared / "no-network")
                (work / "stage.txt").write_text(stage(work, "--config", "config.yaml", env=offline).stdout)
                run_snakemake(work, *TARGETS, "-j", "2", "--resources", "gpu=2", env=offline)
            except Exception as error:
                failed.write_text(f"the tiny run in {work} failed: {error}")
                raise
            built.touch()
    return work
