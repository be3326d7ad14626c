"""A workflow job's log: its resources at the end, exactly, and its tokenizer threads bounded like the rest."""

from __future__ import annotations

import os
import re

from posbias.logs import job_log


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
