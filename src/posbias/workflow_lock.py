"""A workflow killed outright (out of memory, a lost node, a power cut, SIGKILL) leaves Snakemake's lock behind,
and the next run stops at it and asks for `--unlock`. The lock guards against two Snakemake processes writing the
same outputs; a lock that no live Snakemake process holds guards nothing. `clear_stale_lock` removes such a lock,
as `snakemake --unlock` does (it deletes the lock files under `.snakemake/locks`), and leaves a live run's alone,
so `make demo` and the documented cluster commands restart with the same command.

A process counts as a live Snakemake of the directory when its command line names snakemake (the main process,
or a job it started: their scripts run from `.snakemake/scripts`) and its working directory is the directory.
Linux's /proc tells both; elsewhere nothing is cleared.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

LOCKS = Path(".snakemake") / "locks"


def lock_files(directory: str | Path) -> list[Path]:
    return sorted((Path(directory) / LOCKS).glob("*.lock"))


def live_snakemake(directory: str | Path, proc: str | Path = "/proc") -> list[int]:
    """The process ids of the Snakemake processes (and their jobs) running in `directory`."""
    here = Path(directory).resolve()
    found = []
    for entry in Path(proc).iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:  # gone meanwhile, or another user's
            continue
        if "snakemake" in command and cwd == here:
            found.append(int(entry.name))
    return found


def clear_stale_lock(directory: str | Path = ".") -> str:
    """Remove the directory's Snakemake lock when no live Snakemake holds it; returns what was done, in words."""
    locks = lock_files(directory)
    if not locks:
        return "no lock"
    if not Path("/proc/self").exists():
        return "lock left alone: this system has no /proc to tell whether a Snakemake process still holds it"
    live = live_snakemake(directory)
    if live:
        return f"lock left alone: Snakemake runs in {directory} (process {', '.join(map(str, live))})"
    for path in locks:
        path.unlink(missing_ok=True)
    return (f"cleared the lock a killed Snakemake run left in {Path(directory).resolve()} (no Snakemake process "
            f"runs there); the same command resumes the run")
