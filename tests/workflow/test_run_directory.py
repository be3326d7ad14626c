"""`posbias workflow init` and `run` (posbias.workflow) from the checkout: a run directory holds the workflow's
config and profiles, and bad input is one line, exit 2, nothing written. The installed wheel's copy of the workflow
is tested in tests/test_packaging.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from posbias.cli import main
from posbias.workflow import RUN_FILES, workflow_root

ROOT = Path(__file__).resolve().parents[2]


def test_the_checkout_runs_its_own_workflow():
    assert workflow_root() == ROOT


def test_init_writes_the_config_and_profiles_of_the_workflow(tmp_path, capsys):
    assert main(["workflow", "init", str(tmp_path / "study")]) == 0
    assert sorted(p.name for p in (tmp_path / "study").iterdir()) == sorted(RUN_FILES)
    assert (tmp_path / "study" / "config" / "paper" / "common.yaml").read_bytes() == \
        (ROOT / "config" / "paper" / "common.yaml").read_bytes()
    assert (tmp_path / "study" / "profiles" / "slurm" / "config.yaml").is_file()
    assert "posbias workflow run" in capsys.readouterr().out


def test_init_refuses_a_directory_that_holds_files_and_writes_nothing(tmp_path, capsys):
    (tmp_path / "study").mkdir()
    (tmp_path / "study" / "notes.txt").write_text("mine\n")
    with pytest.raises(SystemExit) as stop:
        main(["workflow", "init", str(tmp_path / "study")])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is not an empty directory" in err
    assert [p.name for p in (tmp_path / "study").iterdir()] == ["notes.txt"]


def test_run_needs_a_run_directory(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["workflow", "run", str(tmp_path), "-n"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "no config.yaml" in err and "posbias workflow init" in err


def test_the_installed_workflow_refuses_conda_jobs(tmp_path, monkeypatch, capsys):
    """Installed, the workflow's files are the wheel's copy (posbias/workflow/files), without the clone that
    envs/posbias.yaml installs posbias from."""
    import posbias.workflow as workflow

    packaged = tmp_path / "files"
    (packaged / "rules").mkdir(parents=True)
    (packaged / "Snakefile").write_text("")
    monkeypatch.setattr(workflow, "PACKAGED", packaged)
    assert workflow_root() == packaged
    with pytest.raises(SystemExit) as stop:
        main(["workflow", "run", str(tmp_path), "-j", "2", "--use-conda"])
    assert stop.value.code == 2 and "--use-conda (--software-deployment-method) needs a clone" in \
        capsys.readouterr().err
