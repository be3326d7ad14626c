"""How long the SLURM job a training runs in has left, so training can save and stop before the limit by itself.

SLURM's warning signal (`sbatch --signal`) does not reach a rule's process under the Snakemake executor on clusters
that track processes with cgroups (docs/running.md, "Pre-emption on SLURM"), so training asks SLURM instead:
`squeue -h -j $SLURM_JOB_ID -o %L` (the time left), once at the start and again every `POLL_SECONDS`, because an
administrator (or `scontrol update`) may change a running job's limit. Between readings the time left is counted
down on this process's monotonic clock. Outside a SLURM job, without `squeue`, or for a job without a limit, there
is no limit to watch and training never stops early on time.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
from time import monotonic
from typing import Callable

log = logging.getLogger(__name__)

POLL_SECONDS = 60.0  # one squeue request a minute per training job: little load on slurmctld
SQUEUE_TIMEOUT_S = 20.0
# squeue's %L: "[days-]hours:minutes:seconds", "minutes:seconds", or words (UNLIMITED, NOT_SET, INVALID)
TIME_LEFT = re.compile(r"^(?:(?:(\d+)-)?(\d+):)?(\d+):(\d+)$")


def parse_time_left(text: str) -> float | None:
    """Seconds in squeue's `%L` field, or None when it names no limit ("UNLIMITED", "NOT_SET", "INVALID")."""
    match = TIME_LEFT.match(text.strip())
    if not match:
        return None
    days, hours, minutes, seconds = (int(group or 0) for group in match.groups())
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


def squeue_time_left(job_id: str) -> float | None:
    """The job's time left in seconds as squeue reports it; None when it has no limit or squeue gives no answer."""
    try:
        answer = subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%L"], capture_output=True, text=True,
                                timeout=SQUEUE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        log.warning("could not ask squeue for the time left of SLURM job %s (%s)", job_id, error)
        return None
    if answer.returncode != 0:
        log.warning("squeue -j %s: exit %d: %s", job_id, answer.returncode, answer.stderr.strip()[:200])
        return None
    return parse_time_left(answer.stdout.splitlines()[0] if answer.stdout.strip() else "")


class JobTimeLimit:
    """`due()`: less than `margin_minutes` of the job's time is left, so it is time to save and stop.

    `job_id` defaults to `SLURM_JOB_ID`; `read` (squeue by default), `clock` and `poll_seconds` are there for tests."""

    def __init__(self, margin_minutes: float, job_id: str | None = None,
                 read: Callable[[str], float | None] | None = None, clock: Callable[[], float] = monotonic,
                 poll_seconds: float | None = None):
        self.margin_s = 60.0 * margin_minutes
        self.job_id = job_id if job_id is not None else os.environ.get("SLURM_JOB_ID")
        self._read, self._clock = read or squeue_time_left, clock
        self._poll_s = POLL_SECONDS if poll_seconds is None else poll_seconds
        self._ends_at: float | None = None  # on `clock`; None: no limit known
        self._read_at = -float("inf")
        self.watching = bool(self.job_id) and margin_minutes > 0
        if self.watching:
            self._refresh()
            if self._ends_at is None:
                log.info("SLURM job %s: no time limit to watch; training stops early only on a signal", self.job_id)
            else:
                log.info("SLURM job %s: %.0f min left; training saves and stops %g min before the limit",
                         self.job_id, self.seconds_left() / 60, margin_minutes)

    def _refresh(self) -> None:
        now = self._clock()
        left = self._read(self.job_id)
        self._read_at = now
        self._ends_at = None if left is None else now + left

    def seconds_left(self) -> float | None:
        return None if self._ends_at is None else self._ends_at - self._clock()

    def due(self) -> bool:
        if not self.watching:
            return False
        if self._clock() - self._read_at >= self._poll_s:
            self._refresh()
        left = self.seconds_left()
        return left is not None and left < self.margin_s
