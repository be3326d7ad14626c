"""One GPU per job on one machine with several: a pool of lock files, one per device.

Snakemake's `--resources gpu=N` caps how many GPU jobs run at once, but it does not say which device each gets:
every job would see all of them and start on the first. So a GPU job (a rule with the resource `gpu`) claims its
devices here before it touches CUDA: it holds an exclusive `flock` on one file per device in the pool's directory
and sets `CUDA_VISIBLE_DEVICES` to them, so `cuda` in that process means its own card. The kernel drops a
process's locks when it ends, however it ends (a crash, SIGKILL, an out-of-memory kill), so a device is never lost
to a dead job. A job that finds every device taken waits for one (a run without `--resources gpu=N` starts more
GPU jobs than there are cards; they then queue here).

The pool is this machine's GPUs: the entries of `CUDA_VISIBLE_DEVICES` when it is set (a user keeping some cards
back, or a test simulating a pool on the CPU), else every NVIDIA device the driver lists, found without starting
CUDA. Its lock files live in `$POSBIAS_GPU_POOL` (default `/tmp/posbias-gpus-<uid>`), one directory per machine,
so two workflows on the same machine share it. The pool is used only by the jobs of a run on this machine: the
Snakefile's `onstart` marks those (`LOCAL_RUN_VARIABLE`, which the jobs inherit), including a run inside a SLURM
allocation (`salloc --gpus=4`, whose cards `CUDA_VISIBLE_DEVICES` lists). A job the SLURM executor submitted has
its GPU chosen by the scheduler: nothing is claimed there.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

from posbias.errors import InputError

log = logging.getLogger(__name__)

POOL_DIRECTORY_VARIABLE = "POSBIAS_GPU_POOL"
# Set in a job to the devices it claimed (what `CUDA_VISIBLE_DEVICES` says): `posbias.device` takes it as the word
# that the job was given a GPU, as it takes SLURM's, and stops when torch cannot see one.
CLAIMED_VARIABLE = "POSBIAS_POOL_GPUS"
# Set (to 1) by the Snakefile for a run whose jobs run on this machine: only their GPU jobs claim from the pool.
LOCAL_RUN_VARIABLE = "POSBIAS_GPU_POOL_ACTIVE"
NVIDIA_DEVICES = Path("/proc/driver/nvidia/gpus")  # one entry per GPU the driver manages
WAIT_SECONDS = 1.0  # between tries while every device is taken


def machine_gpus() -> list[str]:
    """The devices GPU jobs on this machine may use, as `CUDA_VISIBLE_DEVICES` entries: that variable's own list
    when it is set (empty or -1: none), else 0..n-1 for the n GPUs of the NVIDIA driver, found without CUDA (a
    process that initialised CUDA could no longer change which devices it sees)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        entries = [entry.strip() for entry in visible.split(",")]
        # CUDA stops at the first invalid entry; -1 is the usual way of hiding every device
        return [] if not entries[0] or entries[0] == "-1" else [entry for entry in entries if entry]
    return [str(number) for number in range(_driver_gpu_count())]


def _driver_gpu_count() -> int:
    if NVIDIA_DEVICES.is_dir():
        return len(list(NVIDIA_DEVICES.iterdir()))
    if shutil.which("nvidia-smi"):  # a container may hide /proc/driver but ship the tool
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60, check=False)
        return sum(line.startswith("GPU ") for line in listed.stdout.splitlines()) if listed.returncode == 0 else 0
    return 0


def pool_directory() -> Path:
    return Path(os.environ.get(POOL_DIRECTORY_VARIABLE) or f"/tmp/posbias-gpus-{os.getuid()}")


def pooled_run() -> bool:
    """Whether this job belongs to a run on this machine (`LOCAL_RUN_VARIABLE`), not to one a cluster executor
    submitted (SLURM chose that job's GPUs and set CUDA_VISIBLE_DEVICES)."""
    return os.environ.get(LOCAL_RUN_VARIABLE) == "1"


def check_request(requested: int, devices: list[str], what: str = "--resources gpu") -> None:
    """An `InputError` when `requested` GPUs (`what`: Snakemake's `--resources gpu`, or a job's resource) exceed
    the machine's `devices`."""
    if requested > len(devices):
        have = f"{len(devices)} ({', '.join(devices)})" if devices else "none"
        raise InputError(f"{what}={requested} asks for more GPUs than this machine has: {have}; give at most "
                         f"gpu={len(devices)} (CUDA_VISIBLE_DEVICES, when set, is the machine's list)")


def _try_lock(path: Path):
    """The open file holding an exclusive lock on `path`, or None when another process holds it."""
    handle = open(path, "a+", encoding="ascii")  # noqa: SIM115 (held for the job's life, closed by `release`)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


def _lock_name(device: str) -> str:
    return "gpu-" + re.sub(r"[^A-Za-z0-9_.-]", "_", device) + ".lock"  # an index, or a GPU-/MIG- UUID


def claim(count: int, devices: list[str], directory: Path) -> dict[str, object] | None:
    """Locks on `count` free devices of `devices` (device to open file), or None when fewer are free."""
    directory.mkdir(parents=True, exist_ok=True)
    held = {}
    for device in devices:
        handle = _try_lock(directory / _lock_name(device))
        if handle is not None:
            held[device] = handle
            if len(held) == count:
                return held
    for handle in held.values():
        handle.close()
    return None


def _check_cuda_not_started() -> None:
    """CUDA reads CUDA_VISIBLE_DEVICES once, when it starts: a job that started it before claiming would use
    whatever it saw then. Counting the devices (`torch.cuda.is_available`, `device_count`) already starts the
    driver, without marking torch's CUDA as initialised; torch keeps that count (torch 2.13: `_cached_device_count`)."""
    torch = sys.modules.get("torch")
    if torch is not None and (torch.cuda.is_initialized() or getattr(torch.cuda, "_cached_device_count", None)
                              is not None):
        raise RuntimeError("GPU pool: CUDA started in this job before it claimed its device; enter gpu_slot before "
                           "anything asks torch about GPUs")


@contextlib.contextmanager
def gpu_slot(job_resources, wait_seconds: float = WAIT_SECONDS) -> Iterator[list[str]]:
    """Inside, this process sees only the devices it claimed for the job (`job_resources.gpu` of them: Snakemake's
    `snakemake.resources`); yields them. Claims nothing for a job without the resource, one not of a run on this
    machine (`pooled_run`: SLURM's executor placed it), or on a machine without GPUs (the job then runs where its
    device setting says: `auto` on the CPU, `cuda` stops naming it)."""
    count = int(getattr(job_resources, "gpu", 0) or 0)
    if count <= 0 or not pooled_run():
        yield []
        return
    devices = machine_gpus()
    if not devices:
        log.info("GPU pool: this machine has no GPU; the job runs where its device setting says")
        yield []
        return
    check_request(count, devices, what="this job's resource gpu")
    _check_cuda_not_started()
    directory, waited = pool_directory(), None
    while (held := claim(count, devices, directory)) is None:
        if waited is None:
            waited = time.monotonic()
            log.info("GPU pool: all %d devices busy (%s); waiting for one (give --resources gpu=%d so Snakemake "
                     "starts no more GPU jobs than that)", len(devices), directory, len(devices))
        time.sleep(wait_seconds)
    claimed = sorted(held, key=devices.index)
    before = {name: os.environ.get(name) for name in ("CUDA_VISIBLE_DEVICES", CLAIMED_VARIABLE)}
    os.environ["CUDA_VISIBLE_DEVICES"] = os.environ[CLAIMED_VARIABLE] = ",".join(claimed)
    log.info("GPU pool: device %s of this machine's %s for this job (CUDA_VISIBLE_DEVICES=%s)%s",
             ",".join(claimed), ",".join(devices), ",".join(claimed),
             f", after waiting {time.monotonic() - waited:.0f} s" if waited is not None else "")
    try:
        yield claimed
    finally:
        for handle in held.values():
            handle.close()
        for name, value in before.items():  # as it was: the process may go on (a test, a notebook)
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
