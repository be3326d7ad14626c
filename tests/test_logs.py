"""A workflow job's log: its resources at the end, exactly, and its tokenizer threads bounded like the rest."""

from __future__ import annotations

import os
import re

import pytest

from posbias.errors import DiskFullError, InputError, ServiceError
from posbias.logs import job_log
from posbias.training.loop import Preempted


def test_a_job_logs_its_cpu_seconds_and_threads_at_its_end(tmp_path):
    log = tmp_path / "job.log"
    with job_log(str(log)):
        sum(range(2_000_000))
    line = log.read_text().splitlines()[-1]
    match = re.search(r"job usage: ([\d.]+) s, ([\d.]+) CPU s \(user [\d.]+\), peak RSS \d+ MB, (\d+) threads", line)
    assert match, line
    assert float(match.group(1)) > 0 and float(match.group(2)) > 0 and int(match.group(3)) >= 1


def test_the_tokenizers_threads_follow_the_jobs(tmp_path, monkeypatch):
    # Snakemake sets OMP_NUM_THREADS to the rule's threads; the tokenizers' Rust pool would take every core
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.delenv("RAYON_NUM_THREADS", raising=False)
    with job_log(str(tmp_path / "job.log")):
        assert os.environ["RAYON_NUM_THREADS"] == "3"
    monkeypatch.setenv("RAYON_NUM_THREADS", "1")  # one set by hand stays
    with job_log(str(tmp_path / "job.log")):
        assert os.environ["RAYON_NUM_THREADS"] == "1"


@pytest.mark.parametrize("error, status, says", [
    (InputError("q.tsv:3: no tab\nbetween id and text"), 2, "job failed"),
    (DiskFullError("results/ckpt: no space left (needs 1.3 GB)"), 4, "job failed"),
    (ServiceError("model m at http://127.0.0.1:1/v1: HTTP 500"), 5, "job failed"),
    (Preempted("training m (seed 1): signal SIGTERM at optimizer step 4 of 6; the state is saved in m.resume"), 6,
     "job stopped")])
def test_a_job_ends_in_one_line_with_its_exit_status_for_input_or_a_fault(tmp_path, error, status, says):
    log = tmp_path / "job.log"
    with pytest.raises(SystemExit) as stopped:
        with job_log(str(log)):
            raise error
    assert stopped.value.code == status
    failed = [line for line in log.read_text().splitlines() if says in line]
    assert len(failed) == 1 and failed[0].endswith(" ".join(str(error).split("\n")))
    assert "Traceback" not in log.read_text()


def test_a_bug_in_a_job_keeps_its_traceback(tmp_path):
    log = tmp_path / "job.log"
    with pytest.raises(KeyError):
        with job_log(str(log)):
            raise KeyError("bug")
    assert "Traceback" in log.read_text()


def test_a_job_leaves_the_root_logger_s_level_as_it_found_it(tmp_path):
    """A job run in-process (a test, a notebook) must not leave INFO records of every library flowing afterwards."""
    import logging

    root = logging.getLogger()
    before = root.level
    root.setLevel(logging.WARNING)
    try:
        with job_log(str(tmp_path / "job.log")):
            assert root.level == logging.INFO
        assert root.level == logging.WARNING
    finally:
        root.setLevel(before)
