"""The GPU pool on the CPU: a simulated machine with a few devices (CUDA_VISIBLE_DEVICES lists them), jobs as real
processes that claim one, hold it, and end or are killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from posbias import gpu_pool
from posbias.device import allotted_gpus
from posbias.errors import InputError

# A job: claim `gpu` devices, write what it got and when to `record`, hold them until `together` jobs have claimed
# theirs and `waiting` others have logged that they wait (however slowly the processes start), then `hold` seconds
# more (or until killed when negative), end.
JOB = textwrap.dedent("""
    import glob, json, logging, os, sys, time
    from pathlib import Path
    from types import SimpleNamespace
    from posbias.gpu_pool import gpu_slot

    logging.basicConfig(level=logging.INFO)  # a job's log (posbias.logs.job_log), here its stderr
    record, gpu, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    together, waiting = int(sys.argv[4]), int(sys.argv[5])

    def met():
        directory = os.path.dirname(record)
        claimed = len(glob.glob(os.path.join(directory, "*.claimed")))
        waiters = sum("devices busy" in Path(log).read_text() for log in glob.glob(os.path.join(directory, "*.log")))
        return claimed >= together and waiters >= waiting

    with gpu_slot(SimpleNamespace(gpu=gpu), wait_seconds=0.02) as claimed:
        start = time.time()
        with open(record + ".claimed", "w") as out:
            json.dump({"claimed": claimed, "visible": os.environ["CUDA_VISIBLE_DEVICES"]}, out)
        deadline = time.time() + 60
        while not met() and time.time() < deadline:
            time.sleep(0.02)
        time.sleep(hold if hold >= 0 else 3600)
        end = time.time()
    with open(record, "w") as out:
        json.dump({"claimed": claimed, "start": start, "end": end}, out)
""")


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A machine whose GPUs are 0, 1 and 2, its pool's lock files under tmp_path."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2")
    monkeypatch.setenv(gpu_pool.POOL_DIRECTORY_VARIABLE, str(tmp_path / "pool"))
    monkeypatch.setenv(gpu_pool.LOCAL_RUN_VARIABLE, "1")  # jobs of a run on this machine (the Snakefile's onstart)
    return tmp_path


def start_job(directory: Path, name: str, gpu: int = 1, hold: float = 0.1, together: int = 0, waiting: int = 0
              ) -> tuple[subprocess.Popen, Path]:
    """A job process; its log (stderr) in `<name>.log`."""
    record = directory / f"{name}.json"
    with open(directory / f"{name}.log", "w") as log:
        process = subprocess.Popen([sys.executable, "-c", JOB, str(record), str(gpu), str(hold), str(together),
                                    str(waiting)],
                                   stderr=log, text=True)
    return process, record


def log_of(directory: Path, name: str) -> str:
    return (directory / f"{name}.log").read_text()


def wait_for(path: Path, seconds: float = 30.0) -> dict:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)
    time.sleep(0.05)  # the writer's json.dump is one small write; let it finish
    return json.loads(path.read_text())


@pytest.mark.parametrize("visible, expected", [("0,1,2", ["0", "1", "2"]), ("3, 5", ["3", "5"]), ("", []),
                                               ("-1", []), ("GPU-8f2a,GPU-77c1", ["GPU-8f2a", "GPU-77c1"])])
def test_the_machine_is_what_cuda_visible_devices_lists_when_it_is_set(monkeypatch, visible, expected):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert gpu_pool.machine_gpus() == expected


def test_without_cuda_visible_devices_the_machine_is_every_gpu_the_driver_lists(tmp_path, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    driver = tmp_path / "gpus"
    for bus in ("0000:18:00.0", "0000:3b:00.0"):
        (driver / bus).mkdir(parents=True)
    monkeypatch.setattr(gpu_pool, "NVIDIA_DEVICES", driver)
    assert gpu_pool.machine_gpus() == ["0", "1"]
    monkeypatch.setattr(gpu_pool, "NVIDIA_DEVICES", tmp_path / "no-driver")
    monkeypatch.setattr(gpu_pool.shutil, "which", lambda name: None)
    assert gpu_pool.machine_gpus() == []


def test_concurrent_jobs_never_share_a_device_and_the_ones_beyond_the_pool_wait(machine):
    # the first three hold their devices until the other four have found them taken, however slowly each starts
    jobs = [start_job(machine, f"job{number}", together=3, waiting=4) for number in range(7)]
    for number, (process, _) in enumerate(jobs):
        assert process.wait(timeout=120) == 0, log_of(machine, f"job{number}")
    records = [json.loads(record.read_text()) for _, record in jobs]
    assert all(len(r["claimed"]) == 1 and r["claimed"][0] in ("0", "1", "2") for r in records)
    assert {r["claimed"][0] for r in records} == {"0", "1", "2"}  # all three cards worked
    for first in records:
        for second in records:
            if first is not second and first["claimed"] == second["claimed"]:
                assert first["end"] <= second["start"] or second["end"] <= first["start"], (first, second)
    # never more jobs at once than devices, and the four beyond them waited
    moments = sorted({r["start"] for r in records})
    assert max(sum(r["start"] <= t < r["end"] for r in records) for t in moments) == 3
    assert sum("devices busy" in log_of(machine, f"job{number}") for number in range(7)) >= 4


def test_a_job_sees_only_its_own_device_and_says_so_as_a_scheduler_would(machine, monkeypatch):
    monkeypatch.delenv("POSBIAS_CPU_DESPITE_ALLOTTED_GPU", raising=False)
    with gpu_pool.gpu_slot(SimpleNamespace(gpu=2)) as claimed:
        assert claimed == ["0", "1"] and os.environ["CUDA_VISIBLE_DEVICES"] == "0,1"
        assert allotted_gpus() == f"{gpu_pool.CLAIMED_VARIABLE}=0,1"  # device 0 counts as a GPU given
        # the third device is still free for another job, and only it
        other = gpu_pool.claim(1, ["0", "1", "2"], gpu_pool.pool_directory())
        assert list(other) == ["2"]
        for handle in other.values():
            handle.close()


def test_a_killed_job_returns_its_device_to_a_job_waiting_for_it(machine, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")  # one device
    holder, holder_record = start_job(machine, "holder", hold=-1)
    waiter = None
    try:
        assert wait_for(holder_record.with_suffix(".json.claimed"))["claimed"] == ["0"]
        waiter, waiter_record = start_job(machine, "waiter", hold=0)
        deadline = time.monotonic() + 60
        while "all 1 devices busy" not in log_of(machine, "waiter"):  # its log says it waits, and why
            assert waiter.poll() is None and time.monotonic() < deadline, log_of(machine, "waiter")
            time.sleep(0.02)
        assert not waiter_record.with_suffix(".json.claimed").exists()
        holder.send_signal(signal.SIGKILL)  # no clean-up runs: the kernel drops the lock
        holder.wait(timeout=10)
        assert waiter.wait(timeout=60) == 0, log_of(machine, "waiter")
        assert json.loads(waiter_record.read_text())["claimed"] == ["0"]
    finally:  # a failed test leaves no process behind
        for process in (holder, waiter):
            if process is not None and process.poll() is None:
                process.kill()


def test_asking_for_more_devices_than_the_machine_has_is_one_line_naming_them(machine):
    with pytest.raises(InputError, match=r"^this job's resource gpu=4 asks for more GPUs than this machine has: 3 "
                                         r"\(0, 1, 2\); give at most gpu=3"):
        with gpu_pool.gpu_slot(SimpleNamespace(gpu=4)):
            pass


@pytest.mark.parametrize("situation", ["no resource", "gpu=0", "a job SLURM's executor placed",
                                       "no GPU on the machine"])
def test_nothing_is_claimed_where_the_pool_has_no_say(machine, monkeypatch, situation):
    resources = SimpleNamespace(gpu=1)
    if situation == "no resource":
        resources = SimpleNamespace()
    elif situation == "gpu=0":
        resources = SimpleNamespace(gpu=0)
    elif situation == "a job SLURM's executor placed":  # its Snakemake ran onstart elsewhere, or not at all
        monkeypatch.delenv(gpu_pool.LOCAL_RUN_VARIABLE)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    before = os.environ["CUDA_VISIBLE_DEVICES"]
    with gpu_pool.gpu_slot(resources) as claimed:
        assert claimed == [] and os.environ["CUDA_VISIBLE_DEVICES"] == before
    assert not (machine / "pool").exists() or not list((machine / "pool").iterdir())
