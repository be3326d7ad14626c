"""Provenance: the results manifest (JSON and HTML), its job's params and the `posbias provenance` command."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import yaml

from posbias.provenance.hashing import config_hash
from posbias.provenance.jobs import ManifestJob
from posbias.provenance.manifest import build_manifest, write_manifest

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-test-0123456789abcdefSECRET"


def write_results(results: Path) -> None:
    """A results directory as the workflow leaves it: tables, a checkpoint with its sidecar, a run with its
    .run.json, training state being resumed, an atomic write's temporary, and another experiment's directory."""
    (results / "figures").mkdir(parents=True)
    (results / "table1.tex").write_text("\\begin{table}\n")
    (results / "figures" / "sweep.png").write_bytes(b"\x89PNG")
    checkpoint = results / "models" / "maxp" / "seed1"
    (checkpoint / "backbone").mkdir(parents=True)
    (checkpoint / "ranker.json").write_text('{"name": "maxp", "args": {}, "backbone_class": "modeling_bert.BertModel"}')
    (checkpoint / "provenance.json").write_text(json.dumps({"device": "cpu", "config_hash": "c" * 64,
                                                            "precision": {"autocast": "fp32"}}))
    old = results / "models" / "firstp" / "seed1"
    old.mkdir(parents=True)
    (old / "ranker.json").write_text('{"name": "firstp", "args": {}}')  # made before sidecars
    (results / "runs" / "dev" / "maxp").mkdir(parents=True)
    (results / "runs" / "dev" / "maxp" / "seed1.run").write_text("q1 Q0 d1 1 1.0 maxp\n")
    (results / "runs" / "dev" / "maxp" / "seed1.run.json").write_text(
        json.dumps({"device": "cpu", "autocast": "fp32", "precision": "auto", "pairs": 1}))
    (results / "models" / "maxp" / "seed2.resume").mkdir(parents=True)
    (results / "models" / "maxp" / "seed2.resume" / "state.pt").write_bytes(b"x")
    (results / ".table7.tex.1a2b3c4d").write_text("half written")
    (results / "robust04").mkdir()
    (results / "robust04" / "provenance.json").write_text("{}")
    (results / "robust04" / "table1.tex").write_text("another experiment's\n")


def test_the_manifest_covers_every_result_with_its_hash_and_the_checkpoints_and_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    results = Path("results")
    write_results(results)
    big = results / "index" / "big.bin"
    big.parent.mkdir()
    big.write_bytes(b"\x00" * 100)
    monkeypatch.setattr("posbias.provenance.manifest.HASH_MAX_BYTES", 50)  # where file_record looks it up
    llms = {"gpt": {"backend": "openai_chat", "model": "gpt-4o", "wrapper": "messages"}}
    manifest = write_manifest(ManifestJob(
        "results/provenance.json", "results/provenance.html", "results", "results", "f" * 64,
        {"offline:all-MiniLM-L6-v2": ["models.maxp.args.backbone"]}, llms,
        departures={"bm25": {"paper": "Anserini's BM25", "here": "Lucene defaults", "why": "no tuning data",
                             "option": "retrievers.bm25"}}))
    files = {f["path"]: f for f in manifest["files"]}
    assert set(files) == {"results/table1.tex", "results/figures/sweep.png", "results/models/maxp/seed1/ranker.json",
                          "results/models/maxp/seed1/provenance.json", "results/models/firstp/seed1/ranker.json",
                          "results/runs/dev/maxp/seed1.run", "results/runs/dev/maxp/seed1.run.json",
                          "results/index/big.bin"}
    assert files["results/table1.tex"]["sha256"] == hashlib.sha256(b"\\begin{table}\n").hexdigest()
    assert "sha256" not in files["results/index/big.bin"] and files["results/index/big.bin"]["bytes"] == 100
    assert manifest["config_hash"] == "f" * 64
    assert manifest["checkpoints"] == [
        {"path": "results/models/firstp/seed1", "provenance": None, "backbone_class": None},  # older: no class
        {"path": "results/models/maxp/seed1", "provenance": {"device": "cpu", "config_hash": "c" * 64,
                                                             "precision": {"autocast": "fp32"}},
         "backbone_class": "modeling_bert.BertModel"}]
    assert manifest["runs"] == [{"path": "results/runs/dev/maxp/seed1.run", "device": "cpu", "autocast": "fp32",
                                 "precision": "auto"}]
    assert manifest["weights"][0]["used_by"] == ["models.maxp.args.backbone"]
    assert manifest["language_models"]["gpt"]["model"] == "gpt-4o"
    assert manifest["departures"]["bm25"]["here"] == "Lucene defaults"
    written = json.loads(Path("results/provenance.json").read_text())
    assert written == json.loads(json.dumps(manifest))
    page = Path("results/provenance.html").read_text()
    for shown in (manifest["environment"]["code"]["commit"], "f" * 64, "results/table1.tex",
                  files["results/table1.tex"]["sha256"], "not recorded", "gpt-4o", "Anserini&#x27;s BM25",
                  "Lucene defaults", "retrievers.bm25"):
        assert shown in page, shown
    assert "http" not in page.replace("<!DOCTYPE html>", "")  # self-contained: the report works offline
    assert SECRET not in Path("results/provenance.json").read_text() and SECRET not in page


def test_an_experiment_in_a_subdirectory_lists_its_own_files_and_the_shared_stages(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_results(Path("results"))
    manifest = build_manifest("results", "results/robust04", "f" * 64, {}, {})
    paths = {f["path"] for f in manifest["files"]}
    assert "results/robust04/table1.tex" in paths and "results/runs/dev/maxp/seed1.run" in paths
    assert "results/table1.tex" not in paths  # the default experiment's table


def test_the_cli_prints_the_environment_and_a_configs_hash(capsys):
    from posbias.cli import main
    from posbias.config import load_config

    assert main(["provenance", "--config", str(ROOT / "config" / "test" / "tiny.yaml")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["environment"]["code"]["root"] == str(ROOT)
    assert printed["config_hash"] == config_hash(load_config(str(ROOT / "config" / "test" / "tiny.yaml")).data)
    assert {w["name"] for w in printed["weights"]} == {"offline:all-MiniLM-L6-v2"}


def test_a_config_without_departures_says_so_on_the_page_instead_of_an_empty_table(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_results(Path("results"))
    write_manifest(ManifestJob("results/provenance.json", "results/provenance.html", "results", "results", "f" * 64,
                               {}, {}, departures={}))
    page = Path("results/provenance.html").read_text()
    assert "none listed" in page and "config/paper/" in page


def test_the_manifest_is_in_the_default_graph_after_every_other_target(tmp_path):
    result = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path),
                             "-n", "all", "--configfile", str(ROOT / "config" / "test" / "tiny.yaml")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    block = result.stdout.split("rule provenance:")[1].split("\n\n")[0]
    inputs = block.split("input:")[1].splitlines()[0].split(", ")
    assert {"results/table1.tex", "results/sweep.html", "results/probes/probes.html",
            "results/litm/qa_3.html"} <= {path.strip() for path in inputs}
    assert "output: results/provenance.json, results/provenance.html" in block


def test_the_manifest_by_hand_is_the_provenance_job_s(tmp_path, monkeypatch):
    """`posbias provenance --write` writes the experiment's manifest with what rule provenance's params hold
    (`manifest_params`): the config's hash, weights, language models and departures."""
    from posbias.cli import main
    from posbias.config import load_config
    from posbias.provenance.manifest import manifest_params

    monkeypatch.chdir(tmp_path)
    write_results(Path("results"))
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    config["experiment"] = "robust04"
    Path("config.yaml").write_text(yaml.safe_dump(config))
    main(["provenance", "--config", "config.yaml", "--write"])
    written = json.loads(Path("results/robust04/provenance.json").read_text())
    job = manifest_params(load_config("config.yaml"))
    assert written["config_hash"] == job["config_hash"] == config_hash(load_config("config.yaml").data)
    assert [w["used_by"] for w in written["weights"]] == list(job["weights"].values())
    assert set(written["language_models"]) == set(job["llms"]) and written["departures"] == job["departures"]
    assert "results/robust04/table1.tex" in {f["path"] for f in written["files"]}
    assert Path("results/robust04/provenance.html").exists() and not Path("results/provenance.json").exists()


def test_writing_a_manifest_needs_a_config(usage_error):
    assert usage_error(["provenance", "--write"]) == "--write needs --config (whose results directory to record)"
