"""Backbones with their own code (the study's JINA and MOSAIC, `trust_remote_code`): refused unless a model opts in,
then trained, scored and checkpointed like any other. The stand-in is a tiny BERT whose config points at model code
in its own directory, as a hub repository with remote code does; nothing is fetched."""

from __future__ import annotations

import json

import pytest
import torch

from posbias.errors import InputError
from posbias.rankers.checkpoint import load_checkpoint, save_checkpoint
from posbias.rankers.registry import build_ranker

CONFIGURATION = '''from transformers import BertConfig


class StandinConfig(BertConfig):
    model_type = "standin_bert"
'''
MODELING = '''from transformers import BertModel

from .configuration_standin import StandinConfig


class StandinModel(BertModel):
    config_class = StandinConfig
'''


@pytest.fixture(scope="module")
def remote_code_backbone(tmp_path_factory, tokenizer) -> str:
    from transformers import BertConfig, BertModel

    path = tmp_path_factory.mktemp("standin")
    (path / "configuration_standin.py").write_text(CONFIGURATION)
    (path / "modeling_standin.py").write_text(MODELING)
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=128)).save_pretrained(path)
    config = json.loads((path / "config.json").read_text())
    config.update(model_type="standin_bert", architectures=["StandinModel"],
                  auto_map={"AutoConfig": "configuration_standin.StandinConfig",
                            "AutoModel": "modeling_standin.StandinModel"})
    (path / "config.json").write_text(json.dumps(config))
    tokenizer.save_pretrained(path)
    return str(path)


def args(backbone: str, **extra) -> dict:
    return dict(backbone=backbone, max_query_tokens=6, chunk_tokens=24, stride=24, max_doc_tokens=24, **extra)


def test_a_backbone_with_its_own_code_is_refused_without_the_opt_in(remote_code_backbone):
    with pytest.raises(InputError, match=r"contains custom code.*only when the model's args set trust_remote_code: true"):
        build_ranker("longp", args(remote_code_backbone))


def test_with_the_opt_in_it_runs_its_own_code_and_round_trips(remote_code_backbone, tokenizer, tmp_path):
    ranker = build_ranker("longp", args(remote_code_backbone, trust_remote_code=True, pooling="mean")).eval()
    assert type(ranker.encoder.backbone).__name__ == "StandinModel"  # the directory's class, not BertModel
    featurizer = ranker.featurizer(tokenizer)
    ids = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    pairs = [(ids("capital of zorvia"), ids(doc)) for doc in ("the capital of zorvia is mendal", "filler words")]
    with torch.no_grad():
        scores = ranker(featurizer.batch(pairs))
    save_checkpoint(ranker, tokenizer, str(tmp_path / "checkpoint"))
    assert (tmp_path / "checkpoint" / "backbone" / "modeling_standin.py").exists()  # the code travels with it
    loaded, _ = load_checkpoint(str(tmp_path / "checkpoint"))
    assert type(loaded.encoder.backbone).__name__ == "StandinModel"
    with torch.no_grad():
        assert torch.equal(loaded(loaded.featurizer(tokenizer).batch(pairs)), scores)
