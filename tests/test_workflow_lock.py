"""A lock left by a killed Snakemake is cleared; a live run's lock is not."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from posbias.cli import main
from posbias.workflow_lock import clear_stale_lock, live_snakemake


def locked(directory):
    locks = directory / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text("results/x\n")
    (locks / "0.output.lock").write_text("results/y\n")
    return locks


def test_a_lock_no_snakemake_holds_is_cleared(tmp_path, capsys):
    locks = locked(tmp_path)
    main(["unlock-stale", "--directory", str(tmp_path)])
    assert not list(locks.glob("*.lock"))
    assert "cleared the lock a killed Snakemake run left" in capsys.readouterr().err
    assert clear_stale_lock(tmp_path) == "no lock"


def test_a_live_run_keeps_its_lock(tmp_path):
    locks = locked(tmp_path)
    # a stand-in for a running Snakemake: its command line names snakemake, it runs in the directory
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "snakemake"], cwd=tmp_path)
    try:
        for _ in range(50):  # until /proc shows its final command line
            if live.pid in live_snakemake(tmp_path):
                break
            time.sleep(0.1)
        assert live.pid in live_snakemake(tmp_path)
        assert clear_stale_lock(tmp_path).startswith(f"lock left alone: Snakemake runs in {tmp_path}")
        assert len(list(locks.glob("*.lock"))) == 2
        assert live.pid not in live_snakemake(tmp_path / ".snakemake")  # another directory's run is not this one's
    finally:
        live.kill()
        live.wait()
    assert clear_stale_lock(tmp_path).startswith("cleared")


@pytest.mark.parametrize("argv", [["unlock-stale"], ["unlock-stale", "--directory", "."]])
def test_nothing_to_do_is_silent(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.chdir(tmp_path)
    main(argv)
    assert capsys.readouterr().err == ""
