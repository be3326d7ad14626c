"""The SLURM job's time left, read from a real `squeue` command line (a fake `squeue` on PATH answering as SLURM
22.05's does) or injected, and when training should save and stop."""

import math
import os
import stat

import pytest

from posbias.errors import InputError
from posbias.training import time_limit
from posbias.training.time_limit import JobTimeLimit, parse_time_left, squeue_time_left


@pytest.mark.parametrize("text, seconds", [
    ("9:41", 581), ("1:00:00", 3600), ("14:59:59", 53999), ("2-03:04:05", 2 * 86400 + 3 * 3600 + 4 * 60 + 5),
    ("0:00", 0), (" 10:00\n", 600), ("UNLIMITED", math.inf), ("NOT_SET", math.inf), ("", None)])
def test_squeue_time_left_formats(text, seconds):
    assert parse_time_left(text) == seconds


def fake_squeue(directory, script: str) -> None:
    path = directory / "squeue"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_squeue_is_asked_for_the_job_and_its_time_left(tmp_path, monkeypatch):
    fake_squeue(tmp_path, 'echo "$@" > "$(dirname "$0")/args"; echo 12:30\n')
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert squeue_time_left("4242") == 750
    assert (tmp_path / "args").read_text().split() == ["-h", "-j", "4242", "-o", "%L"]


def test_a_failing_or_missing_squeue_is_no_limit_and_a_warning(tmp_path, monkeypatch, caplog):
    fake_squeue(tmp_path, 'echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1\n')
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert squeue_time_left("4242") is None
    assert "Invalid job id" in caplog.text
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert squeue_time_left("4242") is None


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_due_once_less_than_the_margin_is_left_counting_down_between_readings():
    clock, readings = Clock(), []

    def read(job_id):
        readings.append((job_id, clock.now))
        return 30 * 60.0  # 30 minutes left at every reading
    limit = JobTimeLimit(10, job_id="7", read=read, clock=clock, poll_seconds=60)
    assert readings == [("7", 1000.0)] and not limit.due()
    clock.now += 30  # within the minute: no new reading, counted down
    assert limit.seconds_left() == 30 * 60 - 30 and len(readings) == 1
    clock.now += 60  # a minute since the reading: read again (30 min left again: the limit was extended)
    assert not limit.due() and len(readings) == 2 and limit.seconds_left() == 30 * 60


def test_a_limit_cut_while_running_is_seen_at_the_next_reading():
    clock, left = Clock(), [3600.0]
    limit = JobTimeLimit(10, job_id="7", read=lambda job_id: left[0], clock=clock, poll_seconds=60)
    left[0] = 9 * 60  # scontrol update TimeLimit=...: 9 minutes left
    clock.now += 59
    assert not limit.due()  # not read yet: still about an hour
    clock.now += 1
    assert limit.due() and limit.seconds_left() == 9 * 60


def test_a_reading_without_an_answer_keeps_the_last_one():
    """A busy slurmctld (squeue fails or times out) near the end: the end time read before still holds."""
    clock, answers = Clock(), iter([20 * 60.0, None, None])
    limit = JobTimeLimit(10, job_id="7", read=lambda job_id: next(answers), clock=clock, poll_seconds=60)
    clock.now += 9 * 60
    assert not limit.due()  # read again: no answer; 11 minutes left by the clock
    clock.now += 2 * 60
    assert limit.due() and limit.seconds_left() == 9 * 60


def test_nothing_to_watch_outside_slurm_with_no_limit_no_margin_or_no_squeue(monkeypatch, caplog):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    never = lambda job_id: pytest.fail("squeue asked outside a SLURM job")  # noqa: E731
    assert not JobTimeLimit(10, read=never).due()
    assert not JobTimeLimit(0, job_id="7", read=never).due()
    clock = Clock()
    unlimited = JobTimeLimit(10, job_id="7", read=lambda job_id: math.inf, clock=clock, poll_seconds=60)
    clock.now += 10 ** 6
    assert not unlimited.due() and unlimited.seconds_left() is None
    monkeypatch.setenv("PATH", "/nowhere")  # a container without SLURM's commands: one warning, not one a minute
    assert not JobTimeLimit(10, job_id="7").watching
    assert caplog.text.count("no squeue on PATH") == 1


def test_a_job_with_less_than_the_margin_left_at_the_start_is_refused_in_one_line():
    with pytest.raises(InputError, match=r"^training.stop_before_limit_minutes: 10 min is more than SLURM job 7 has "
                                         r"left \(4.0 min\): training would stop after its first step"):
        JobTimeLimit(10, job_id="7", read=lambda job_id: 240.0)


def test_the_job_id_comes_from_slurm(monkeypatch):
    monkeypatch.setenv("SLURM_JOB_ID", "31337")
    seen = []
    JobTimeLimit(10, read=lambda job_id: seen.append(job_id) or math.inf)
    assert seen == ["31337"] and time_limit.POLL_SECONDS == 60
