"""A workflow killed outright (SIGKILL: what out-of-memory, a lost node or a power cut leave) restarts with the
same command, `posbias unlock-stale` then snakemake as `make demo` runs them, and makes the same tables.

It runs in a copy of the tiny config's finished run with the first-stage table, its values and its candidates gone
(Snakemake rebuilds no missing file whose consumers are complete): the jobs that rebuild them (BM25 and hybrid
retrieval, their evaluations, the table) are the ones killed and resumed, without generating the data and building
the indexes again."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from posbias.evaluation.paths import first_stage_values
from posbias.retrieval.paths import candidates
from snakemake_runs import ROOT, SNAKEMAKE, copy_of_run, run_snakemake

TARGET = "results/first_stage.csv"  # BM25 against the hybrid retriever: four candidate runs, their values, a table
DEPTH = 20  # the tiny config's tables.first_stage.depth
CANDIDATES = candidates("*", "*", DEPTH)  # what the first-stage table's values read
REBUILT = (CANDIDATES, first_stage_values("*", "*", DEPTH), "results/first_stage.*")


@pytest.mark.slow
def test_a_run_killed_by_sigkill_resumes_with_the_same_command(finished_run, tmp_path):
    from posbias.cli import main

    work = copy_of_run(finished_run, tmp_path / "killed")
    removed = [sorted(work.glob(pattern)) for pattern in REBUILT]
    assert [len(paths) for paths in removed[:2]] == [4, 4], removed  # BM25 and hybrid, dev and test
    for path in (path for paths in removed for path in paths):
        path.unlink()
    command = [*SNAKEMAKE, "-s", str(ROOT / "Snakefile"), "-d", str(work), "-j", "1", TARGET]
    run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not list(work.glob(CANDIDATES)) and run.poll() is None and time.monotonic() < deadline:  # a job done
            time.sleep(0.2)
        assert run.poll() is None, "the run ended before it could be killed"
    finally:
        os.killpg(run.pid, signal.SIGKILL)  # the whole session: Snakemake and the job it runs
        run.wait()
    assert list((work / ".snakemake" / "locks").glob("*.lock")), "SIGKILL left no lock: nothing to test"
    # what make demo's snakemake command meets without unlock-stale (with --rerun-incomplete, or Snakemake may first
    # report the killed job's incomplete outputs, depending on when the kill came)
    stuck = run_snakemake(work, "-j", "1", "--rerun-incomplete", TARGET, check=False)
    assert stuck.returncode != 0 and "unlock" in (stuck.stdout + stuck.stderr)

    main(["unlock-stale", "--directory", str(work)])  # the same command as make demo's: unlock-stale, snakemake
    run_snakemake(work, "-j", "1", "--rerun-incomplete", TARGET)
    for name in ("first_stage.csv", "first_stage.tex"):
        assert (work / "results" / name).read_bytes() == (finished_run / "results" / name).read_bytes(), name
