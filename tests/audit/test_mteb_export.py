"""`posbias audit --export mteb DIR`: an audit's records, made by the audit's own `run_battery` from planted values,
written as MTEB result files in mteb's folder layout and loaded back with mteb's own loader and `TaskResult`; the
numbers are the records'; a refusal writes nothing; bad options are refused before anything runs."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from planted_audit import write_audit
from posbias.cli import main

pytest.importorskip("mteb")  # an extra: pip install 'posbias[mteb]'

def test_the_export_loads_with_mteb_with_the_record_s_numbers(tmp_path, monkeypatch, capsys):
    from mteb.cache import ResultCache
    from mteb.results import TaskResult

    records = {r["battery"]: r for r in write_audit(tmp_path / "audits", monkeypatch)}
    out = tmp_path / "mteb"
    assert main(["audit", "--report-only", "--no-report", "--out", str(tmp_path / "audits"), "--export", "mteb",
                 str(out)]) == 0
    folder = out / "results" / "mini" / "abc123"  # the audit's name, the spec's pinned revision
    assert capsys.readouterr().out.strip().startswith(
        f"mteb export: 3 task results in {folder} (PosbiasSweep, PosbiasProbes, PosbiasGrid; loaded back by mteb ")
    assert sorted(path.name for path in folder.iterdir()) == ["PosbiasGrid.json", "PosbiasProbes.json",
                                                              "PosbiasSweep.json"]
    loaded = ResultCache(out).load_results(require_model_meta=False, include_remote=False)
    (model,) = loaded.model_results
    assert (model.model_name, model.model_revision) == ("mini", "abc123")
    results = {result.task_name: result for result in model.task_results}
    sweep = results["PosbiasSweep"].scores["test"][0]
    summary = records["sweep"]["summary"]
    assert sweep["hf_subset"] == "default" and sweep["languages"] == ["eng-Latn"]
    assert sweep["main_score"] == pytest.approx(summary["worst"], abs=1e-6) == sweep["mrr_worst"]
    for key, number in (("mrr_first", "reference_mean"), ("mrr_best", "best"), ("psi", "psi"),
                        ("psi_above_chance", "psi_above_chance")):
        assert sweep[key] == pytest.approx(summary[number], abs=1e-6)
    assert sweep["reach"] == summary["reach"] + 1 and sweep["significant_drops"] == summary["significant_drops"]
    curve = pd.read_csv(tmp_path / "audits" / "mini" / "sweep.curve.csv")
    assert [point["mean"] for point in sweep["curve"]] == pytest.approx(curve["mean"].tolist(), abs=1e-6)
    assert sweep["curve"][0]["p_adjusted"] is None and results["PosbiasSweep"].evaluation_time == \
        records["sweep"]["seconds"]
    probes = results["PosbiasProbes"].scores["test"][0]
    assert probes["psi"] is None and probes["score_worst"] == pytest.approx(records["probes"]["summary"]["worst"])
    grid = results["PosbiasGrid"].scores["test"]
    assert [subset["hf_subset"] for subset in grid] == ["40_tokens", "80_tokens"]
    assert grid[1]["psi"] == pytest.approx(records["grid"]["summary"]["lengths"]["80"]["psi"], abs=1e-6)
    again = TaskResult.from_disk(folder / "PosbiasSweep.json")
    assert again.dataset_revision.startswith("posbias-") and again.get_score() == sweep["main_score"]
    assert json.loads((folder / "PosbiasSweep.json").read_text())["task_name"] == "PosbiasSweep"
    # the options name the model's folder (org/name as org__name) and its revision; the export is replaced
    assert main(["audit", "--report-only", "--no-report", "--out", str(tmp_path / "audits"), "--export",
                 "mteb?model=org/mini&revision=v2", str(out)]) == 0
    assert [path.relative_to(out).as_posix() for path in sorted(out.glob("results/*/*"))] == [
        "results/org__mini/v2"]
    (model,) = ResultCache(out).load_results(require_model_meta=False, include_remote=False).model_results
    assert (model.model_name, model.model_revision) == ("org/mini", "v2")


def test_refusals_write_nothing(tmp_path, monkeypatch, input_error):
    write_audit(tmp_path / "audits", monkeypatch, batteries=("sweep",))
    audits = str(tmp_path / "audits")
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine")
    assert input_error(["audit", "--report-only", "--no-report", "--out", audits, "--export", "mteb", occupied]) == (
        f"--export mteb {occupied}: holds notes.txt, which an export does not write; give a new or empty directory "
        f"(an export replaces its directory whole)")
    assert [path.name for path in occupied.iterdir()] == ["notes.txt"]
    # files mteb's loader does not read back as written are an error, not a warning
    from mteb.cache import ResultCache
    from mteb.results import BenchmarkResults

    monkeypatch.setattr(ResultCache, "load_results", lambda self, **kwargs: BenchmarkResults(model_results=[]))
    out = tmp_path / "mteb"
    assert input_error(["audit", "--report-only", "--no-report", "--out", audits, "--export", "mteb", out]) == (
        f"{out}: mteb loads the models [], not ('mini', 'abc123'); nothing was exported")
    assert not out.exists() and not [path for path in tmp_path.iterdir() if path.name.startswith(".mteb")]


@pytest.mark.parametrize("export, message", [
    ("mteb?modle=x", "--export mteb: unknown option 'modle'; known: model, revision"),
    ("mteb?model=../escape", "--export mteb: model '../escape' must be NAME or ORGANISATION/NAME"),
    ("mteb?revision=a/b", "--export mteb: revision 'a/b' must be one word"),
])
def test_bad_options_are_refused_before_the_audit_runs(tmp_path, monkeypatch, capsys, export, message):
    monkeypatch.chdir(tmp_path)  # were it to run, its cache stays here
    with pytest.raises(SystemExit) as exit_:
        main(["audit", "--model", "rankgpt:mock:identity", "--out", str(tmp_path / "audits"), "--export", export,
              str(tmp_path / "mteb")])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]  # after argparse's usage
    assert error.startswith("posbias audit: error: ") and message in error
    assert not (tmp_path / "audits").exists()


def test_without_mteb_the_export_says_what_to_install(tmp_path, monkeypatch, input_error):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None if name == "mteb" else real(name, *args))
    assert input_error(["audit", "--report-only", "--out", tmp_path, "--export", "mteb", tmp_path / "mteb"]).endswith(
        "--export mteb needs the mteb package, which validates the files: pip install 'posbias[mteb]'")
