"""`posbias audit --export hf DIR`: an audit's records, made by the audit's own `run_battery` from planted values,
written as the Hub's `.eval_results/` entries and a model card, read back with huggingface_hub's own classes; the
numbers are the records'; a refusal writes nothing; a bad --export is refused before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from planted_audit import SETTINGS, write_audit
from posbias.cli import main

def read_entries(path: Path) -> list:
    from huggingface_hub import parse_eval_result_entries

    return parse_eval_result_entries(yaml.safe_load(path.read_text(encoding="utf-8")))


def test_the_export_is_read_back_by_huggingface_hub_with_the_record_s_numbers(tmp_path, monkeypatch, capsys):
    from huggingface_hub import ModelCard

    records = {r["battery"]: r for r in write_audit(tmp_path / "audits", monkeypatch)}
    hub = tmp_path / "hub"
    assert main(["audit", "--report-only", "--no-report", "--out", str(tmp_path / "audits"), "--export", "hf",
                 str(hub)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("hf export: 20 eval results in ") and "read back by huggingface_hub" in line
    assert sorted(path.name for path in (hub / ".eval_results").iterdir()) == [
        "posbias-grid.yaml", "posbias-probes.yaml", "posbias-sweep.yaml"]
    sweep = {entry.task_id: entry for entry in read_entries(hub / ".eval_results" / "posbias-sweep.yaml")}
    summary = records["sweep"]["summary"]
    assert {entry.dataset_id for entry in sweep.values()} == {"posbias/sweep"}
    assert sweep["sweep_mrr_first"].value == summary["reference_mean"]
    assert sweep["sweep_mrr_best"].value == summary["best"] and sweep["sweep_mrr_worst"].value == summary["worst"]
    assert sweep["sweep_psi"].value == summary["psi"] > 0.2
    assert sweep["sweep_psi_above_chance"].value == summary["psi_above_chance"]
    assert sweep["sweep_reach"].value == summary["reach"] + 1 and sweep["sweep_reach_tokens"].value == \
        summary["reach_tokens"]
    assert sweep["sweep_significant_drops"].value == summary["significant_drops"]
    notes = sweep["sweep_psi"].notes
    commit = records["sweep"]["environment"]["code"]["commit"]
    assert notes.startswith("PSI, 1 - worst/best over positions. posbias ") and "settings fingerprint " in notes
    assert (commit or "unknown")[:12] in notes and "10 units x 5 positions" in notes
    probes = {entry.task_id: entry.value for entry in read_entries(hub / ".eval_results" / "posbias-probes.yaml")}
    assert "probes_psi" not in probes and probes["probes_score_worst"] == records["probes"]["summary"]["worst"]
    grid = {entry.task_id: entry.value for entry in read_entries(hub / ".eval_results" / "posbias-grid.yaml")}
    assert grid["grid_psi"] == records["grid"]["summary"]["lengths"]["80"]["psi"]
    card = ModelCard.load(hub / "README.md")
    assert card.data.model_name == "mini" and "posbias" in card.data.tags
    index = {(r.dataset_type, r.metric_type): r.metric_value for r in card.data.eval_results}
    assert index[("posbias/sweep", "sweep_psi")] == summary["psi"]
    assert index[("posbias/probes", "probes_score_best")] == records["probes"]["summary"]["best"]
    assert len(index) == 20
    for battery in records:
        assert f"![{battery} curve](posbias/{battery}.png)" in card.text
        assert (hub / "posbias" / f"{battery}.png").read_bytes().startswith(b"\x89PNG")
    assert "| PSI (1 - worst/best) | " in card.text and "|  | 40 tokens | 80 tokens |" in card.text
    # the same export again replaces its directory; the options name the dataset and the model
    assert main(["audit", "--report-only", "--no-report", "--out", str(tmp_path / "audits"), "--export",
                 "hf?dataset=me/bench-{battery}&model=Org/Mini", str(hub)]) == 0
    assert {entry.dataset_id for entry in read_entries(hub / ".eval_results" / "posbias-probes.yaml")} == {
        "me/bench-probes"}
    assert ModelCard.load(hub / "README.md").data.model_name == "Org/Mini"


def test_an_audit_run_exports_what_it_wrote(tmp_path, monkeypatch, capsys):
    """The run path: a mock listwise ranker audited and exported in one command, both formats."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "small.yaml").write_text(yaml.safe_dump({"order": {"n_queries": 6}, **SETTINGS}))
    assert main(["audit", "--model", "rankgpt:mock:identity", "--battery", "order", "--settings", "small.yaml",
                 "--out", "audits", "--cache", "cache", "--no-report", "--export", "hf", "hub"]) == 0
    assert capsys.readouterr().out.startswith("hf export: ")
    record = json.loads((tmp_path / "audits" / "rankgpt-mock-identity" / "order.json").read_text())
    entries = {entry.task_id: entry.value for entry in read_entries(tmp_path / "hub" / ".eval_results" /
                                                                     "posbias-order.yaml")}
    assert entries["order_mrr_worst"] == record["summary"]["worst"]


def test_refusals_write_nothing(tmp_path, monkeypatch, input_error):
    write_audit(tmp_path / "audits", monkeypatch, batteries=("sweep",))
    audits = str(tmp_path / "audits")
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "model.safetensors").write_text("weights")
    assert input_error(["audit", "--report-only", "--no-report", "--out", audits, "--export", "hf", occupied]) == (
        f"--export hf {occupied}: holds model.safetensors, which an export does not write; give a new or empty "
        f"directory (an export replaces its directory whole)")
    assert [path.name for path in occupied.iterdir()] == ["model.safetensors"]
    hub = tmp_path / "hub"
    assert input_error(["audit", "--report-only", "--no-report", "--out", audits, "--name", "nobody", "--export",
                        "hf", hub]) == f"{tmp_path / 'audits' / 'nobody'}: not an audit directory (posbias audit " \
                                       f"writes <out>/<name>/)"
    write_audit(tmp_path / "audits", monkeypatch, name="other", batteries=("sweep",))
    assert input_error(["audit", "--report-only", "--no-report", "--out", audits, "--export", "hf", hub]) == (
        f"--export: --out {audits} holds the audits mini, other; give --name to choose one")
    # a file huggingface_hub does not read back as written is an error, not a warning
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "parse_eval_result_entries", lambda data: [])
    assert input_error(["audit", "--report-only", "--no-report", "--out", audits, "--name", "mini", "--export",
                        "hf", hub]) == (f"{hub / '.eval_results' / 'posbias-sweep.yaml'}: huggingface_hub reads back "
                                        f"0 entries unlike the 8 written; nothing was exported")
    assert not hub.exists() and not [path for path in tmp_path.iterdir() if path.name.startswith(".hub")]


@pytest.mark.parametrize("export, message", [
    (["csv", "x"], "--export 'csv': FORMAT must be one of hf, mteb"),
    (["hf?datset=me/x", "x"], "--export hf: unknown option 'datset'; known: dataset, model"),
    (["hf?dataset=not a/dataset", "x"], "--export hf: dataset 'not a/dataset' is not a Hub dataset id"),
    (["hf?dataset=", "x"], "--export hf: dataset '' is not a Hub dataset id"),
    (["hf?dataset", "x"], "--export hf: options must be key=value pairs joined by &"),
    (["hf", "busy"], "--export hf busy: holds notes.txt, which an export does not write"),
    (["hf", "x", "--export", "mteb", "x"], "--export mteb x: the --export hf goes there too; give each its own"),
])
def test_a_bad_export_is_refused_before_the_audit_runs(tmp_path, monkeypatch, capsys, export, message):
    monkeypatch.chdir(tmp_path)  # were it to run, its cache stays here
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine\n")
    with pytest.raises(SystemExit) as exit_:
        main(["audit", "--model", "rankgpt:mock:identity", "--out", str(tmp_path / "audits"), "--export", *export])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]  # after argparse's usage
    assert error.startswith("posbias audit: error: ") and message in error
    assert not (tmp_path / "audits").exists()
