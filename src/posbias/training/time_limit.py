"""How long the SLURM job a training runs in has left, so training can save and stop before the limit by itself.

SLURM's warning signal (`sbatch --signal`) does not reach a rule's process under the Snakemake executor on clusters
that track processes with cgroups (docs/running.md, "Pre-emption on SLURM"), so training asks SLURM instead:
`squeue -h -j $SLURM_JOB_ID -o %L` (the time left), once at the start and again every `POLL_SECONDS`, because an
administrator (or `scontrol update`) may change a running job's limit. Between readings the time left is counted
down on this process's monotonic clock, so a stop comes at the first step that ends with less than the margin left;
a reading that gets no answer keeps the last one. Outside a SLURM job, without `squeue`, or for a job without a
limit, there is no limit to watch and training never stops early on time.
"""

from __future__ import annotations

import logging
import math
import os
import re
import shutil
import subprocess
from time import monotonic
from typing import Callable

from posbias.errors import InputError

log = logging.getLogger(__name__)

POLL_SECONDS = 60.0  # one squeue request a minute per training job: little load on slurmctld
SQUEUE_TIMEOUT_S = 20.0
# squeue's %L: "[days-]hours:minutes:seconds" or "minutes:seconds"; words (UNLIMITED, NOT_SET) when there is no limit
TIME_LEFT = re.compile(r"^(?:(?:(\d+)-)?(\d+):)?(\d+):(\d+)$")


def parse_time_left(text: str) -> float | None:
    """Seconds in squeue's `%L` field; `math.inf` for a word ("UNLIMITED", "NOT_SET": no limit); None for nothing
    (squeue printed no line: it does not know the job)."""
    text = text.strip()
    if not text:
        return None
    match = TIME_LEFT.match(text)
    if not match:
        return math.inf
    days, hours, minutes, seconds = (int(group or 0) for group in match.groups())
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


def squeue_time_left(job_id: str) -> float | None:
    """The job's time left in seconds as squeue reports it (`math.inf`: no limit); None when squeue gave no answer."""
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

    `job_id` defaults to `SLURM_JOB_ID`; `read` (squeue by default), `clock` and `poll_seconds` are there for tests.
    A job that has less than the margin left when training starts is refused (one line): it would stop after
    every first step."""

    def __init__(self, margin_minutes: float, job_id: str | None = None,
                 read: Callable[[str], float | None] | None = None, clock: Callable[[], float] = monotonic,
                 poll_seconds: float | None = None):
        self.margin_s = 60.0 * margin_minutes
        self.job_id = job_id if job_id is not None else os.environ.get("SLURM_JOB_ID")
        self._read, self._clock = read or squeue_time_left, clock
        self._poll_s = POLL_SECONDS if poll_seconds is None else poll_seconds
        self._ends_at: float | None = None  # on `clock`; None: no limit known
        self._read_at = -math.inf
        self.watching = bool(self.job_id) and margin_minutes > 0
        if self.watching and read is None and shutil.which("squeue") is None:
            log.warning("SLURM job %s: no squeue on PATH, so training cannot watch the job's time limit; it stops "
                        "early only on a signal", self.job_id)
            self.watching = False
        if not self.watching:
            return
        self._refresh()
        left = self.seconds_left()
        if left is None:
            log.info("SLURM job %s: no time limit to watch; training stops early only on a signal", self.job_id)
            return
        if left < self.margin_s:
            raise InputError(f"training.stop_before_limit_minutes: {margin_minutes:g} min is more than SLURM job "
                             f"{self.job_id} has left ({left / 60:.1f} min): training would stop after its first "
                             f"step; lower it, or give the train rule a longer runtime")
        log.info("SLURM job %s: %.0f min left; training saves and stops %g min before the limit",
                 self.job_id, left / 60, margin_minutes)

    def _refresh(self) -> None:
        now = self._clock()
        self._read_at = now
        left = self._read(self.job_id)
        if left is not None:  # no answer: keep counting down from the last reading
            self._ends_at = None if math.isinf(left) else now + left

    def seconds_left(self) -> float | None:
        return None if self._ends_at is None else self._ends_at - self._clock()

    def due(self) -> bool:
        if not self.watching:
            return False
        if self._clock() - self._read_at >= self._poll_s:
            self._refresh()
        left = self.seconds_left()
        return left is not None and left < self.margin_s
