"""Provenance: the config hash and the content hash of pretrained weights."""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path

import yaml

from posbias.provenance import hashing
from posbias.provenance.hashing import config_hash, content_hash

ROOT = Path(__file__).resolve().parents[2]


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
    monkeypatch.setattr(hashing, "CONTENT_HASH_MAX_BYTES", 10)
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "config.json").write_text("{}")
    (tmp_path / "big" / "model.safetensors").write_bytes(b"\x00" * 64)
    assert content_hash(tmp_path / "big")["method"] == "fingerprint"
