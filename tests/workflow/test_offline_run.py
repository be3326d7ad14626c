"""The workflow on a machine without internet: the tiny run (conftest.py's `finished_run`) is staged with `posbias
stage` and then runs with every process's network blocked and POSBIAS_OFFLINE=1 (no_network.py); a job whose
backbone was never staged ends at once with one line naming it and the stage command."""

from __future__ import annotations

import os
import subprocess
import sys

import yaml

from no_network import BLOCKED, offline_environment
from snakemake_runs import copy_of_run, run_snakemake

PROBE_JOB = '''rule probe:
    output: "probe.txt"
    script: "probe.py"
'''
PROBE_SCRIPT = '''import os, socket
try:
    socket.create_connection(("192.0.2.1", 80), timeout=2)  # TEST-NET-1: no reply either way
    outcome = "connected"
except OSError as err:
    outcome = str(err)
with open(snakemake.output[0], "w") as out:
    out.write(f"{os.environ.get('POSBIAS_OFFLINE')} {os.environ.get('HF_HUB_OFFLINE')} {outcome}")
'''


def test_the_block_reaches_the_script_jobs_snakemake_starts(tmp_path):
    """Without this, the offline run below would prove nothing: its jobs are Snakemake's script jobs."""
    (tmp_path / "Snakefile").write_text(PROBE_JOB)
    (tmp_path / "probe.py").write_text(PROBE_SCRIPT)
    env = offline_environment(dict(os.environ), tmp_path / "no-network")
    result = subprocess.run([sys.executable, "-m", "snakemake", "-j", "1", "-d", str(tmp_path)], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    # a plain Snakefile sets no HF_HUB_OFFLINE (the workflow's does); the block and POSBIAS_OFFLINE reach the job
    assert (tmp_path / "probe.txt").read_text() == f"1 None [Errno 101] {BLOCKED}"


def test_the_tiny_run_was_staged_then_ran_with_the_network_blocked(finished_run):
    table = (finished_run / "stage.txt").read_text()
    # the tiny BERT directory is its only input from outside the workflow (the rest is generated or a mock)
    assert table.splitlines()[-1] == "1 input: 1 present"
    assert "directory" in table
    assert (finished_run / "results" / "provenance.json").is_file()  # rule all's last job


def test_a_job_whose_backbone_was_never_staged_fails_at_once_naming_it_and_the_stage_command(finished_run, tmp_path):
    work = copy_of_run(finished_run, tmp_path / "work")
    config = yaml.safe_load((work / "config.yaml").read_text())
    config["retrievers"]["hybrid"]["encoder"]["model"] = "posbias-tests/never-staged"
    other = work / "unstaged.yaml"
    other.write_text(yaml.safe_dump(config, sort_keys=False))
    env = offline_environment(dict(os.environ), tmp_path / "no-network")
    result = run_snakemake(work, "results/vectors/synthetic/hybrid", "-j", "1", "--configfile", str(other),
                           check=False, env=env)
    assert result.returncode != 0
    log = (work / "logs/retrieval/dense_encode/synthetic/hybrid.log").read_text().splitlines()
    failed = [line for line in log if "job failed" in line]
    assert len(failed) == 1 and "Traceback" not in "\n".join(log), log[-5:]
    assert failed[0].endswith(f"job failed: Hugging Face model 'posbias-tests/never-staged' not staged: run posbias "
                              f"stage --config {other} on a machine with internet")
