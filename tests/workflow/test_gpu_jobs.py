"""One device per GPU job on one machine: the tiny run's jobs on a simulated machine with two GPUs (conftest's
`finished_run`), and a request for more GPUs than the machine has."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from conftest import SIMULATED_GPUS, simulated_gpus
from snakemake_runs import TARGETS, run_snakemake, tiny_config, write_config

CLAIM = re.compile(r"^(\S+ \S+) INFO posbias.gpu_pool: GPU pool: device (\S+) of this machine's", re.M)
USAGE = re.compile(r"^(\S+ \S+) INFO posbias.logs: job usage:", re.M)
# Log folders of the tiny config's jobs that run a network, one job at least each, and of jobs that run none
GPU_JOB_LOGS = ("train/", "rerank_checkpoint/", "retrieval/dense_encode/", "retrieval/hybrid_retrieve/",
                "probes/score/", "audit/")
CPU_JOB_LOGS = ("retrieval/bm25_index/", "retrieval/bm25_retrieve/", "retrieval/dense_index/", "evaluate/",
                "stats/", "report/", "data/", "litm/")  # the tiny config's readers are mocks: no GPU


def moment(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f")


def gpu_jobs(run: Path) -> list[tuple[str, str, datetime, datetime]]:
    """(log, device, claimed at, done at) of every job whose log says it claimed a device."""
    jobs = []
    for log in sorted((run / "logs").rglob("*.log")):
        text = log.read_text(errors="replace")
        claimed, done = CLAIM.search(text), USAGE.search(text)
        if claimed:
            assert done, f"{log}: claimed a device but never finished"
            jobs.append((str(log.relative_to(run / "logs")), claimed.group(2), moment(claimed.group(1)),
                         moment(done.group(1))))
    return jobs


def test_every_gpu_job_names_its_own_device_and_no_two_at_once_share_one(finished_run):
    jobs = gpu_jobs(finished_run)
    assert all(any(log.startswith(folder) for log, *_ in jobs) for folder in GPU_JOB_LOGS), [log for log, *_ in jobs]
    assert {device for _, device, _, _ in jobs} <= set(SIMULATED_GPUS.split(","))
    for index, (log, device, start, end) in enumerate(jobs):
        for other, other_device, other_start, other_end in jobs[index + 1:]:
            if device == other_device:
                assert end <= other_start or other_end <= start, f"{log} and {other} held device {device} at once"
    # no job that takes no GPU claimed one: the indexes, the evaluations, the tables
    assert not any(log.startswith(CPU_JOB_LOGS) for log, *_ in jobs)


def test_more_gpus_than_the_machine_has_is_one_line_before_any_job_runs(tmp_path, tiny_backbone):
    write_config(tmp_path, tiny_config(tiny_backbone))
    result = run_snakemake(tmp_path, *TARGETS, "-j", "2", "--resources", "gpu=3", check=False,
                           env=simulated_gpus(tmp_path / "pool"))
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert errors == ["resources error: --resources gpu=3 asks for more GPUs than this machine has: 2 (0, 1); give "
                      "at most gpu=2 (CUDA_VISIBLE_DEVICES, when set, is the machine's list)"]
    assert not (tmp_path / "results").exists() and not (tmp_path / "logs").exists()
