"""No silent weight loss for any backbone: a weight the model has and its checkpoint lacks, or a weight of the
checkpoint that belongs to the model's own modules but finds no place in it, is an `InputError` naming the keys;
heads the model does not have (an MLM checkpoint's `cls.*`), layers cut off on purpose (`backbone_layers`) and the
pooler the rankers drop are not."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from posbias.errors import InputError
from posbias.rankers.encoder import load_backbone


def copy_of(backbone: str, directory) -> str:
    shutil.copytree(backbone, directory)
    return str(directory)


def edit_config(directory: str, **changes) -> None:
    path = f"{directory}/config.json"
    config = json.loads(open(path).read())
    config.update(changes)
    open(path, "w").write(json.dumps(config))


def test_a_bert_checkpoint_labelled_electra_is_refused_naming_the_keys(tiny_backbone, tmp_path):
    directory = copy_of(tiny_backbone, tmp_path / "electra")
    edit_config(directory, model_type="electra", architectures=["ElectraModel"], embedding_size=16)
    with pytest.raises(InputError, match=r"^the backbone '.*electra' does not fit its class transformers\.models\."
                                         r"electra\.modeling_electra\.ElectraModel: weights 2 missing from the "
                                         r"checkpoint \(they would be random\): embeddings_project\.bias, "
                                         r"embeddings_project\.weight; \d+ of another shape in the checkpoint: "
                                         r"embeddings\.LayerNorm\.bias \(32,\) for \(16,\)"):
        load_backbone(directory)


def test_a_renamed_weight_is_refused_as_missing_and_unused(tiny_backbone, tmp_path):
    from safetensors.torch import load_file, save_file

    directory = copy_of(tiny_backbone, tmp_path / "renamed")
    state = load_file(f"{directory}/model.safetensors")
    state["encoder.layer.1.attention.self.qry.weight"] = state.pop("encoder.layer.1.attention.self.query.weight")
    save_file(state, f"{directory}/model.safetensors", metadata={"format": "pt"})
    with pytest.raises(InputError, match=r"weights 1 missing from the checkpoint \(they would be random\): "
                                         r"encoder\.layer\.1\.attention\.self\.query\.weight; 1 of the checkpoint "
                                         r"unused: encoder\.layer\.1\.attention\.self\.qry\.weight\. Is the config"):
        load_backbone(directory)


def test_an_mlm_checkpoints_head_is_left_out_without_error(tiny_backbone, tmp_path):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    config = BertConfig.from_pretrained(tiny_backbone)
    BertForMaskedLM(config).save_pretrained(tmp_path / "mlm")  # cls.predictions.*, no pooler
    backbone = load_backbone(str(tmp_path / "mlm"))
    assert type(backbone).__name__ == "BertModel" and backbone.pooler is None


def test_layers_cut_off_on_purpose_are_left_out_but_not_otherwise(tiny_backbone, tmp_path):
    assert len(load_backbone(tiny_backbone, layers=1).encoder.layer) == 1  # backbone_layers: 1
    directory = copy_of(tiny_backbone, tmp_path / "one-layer-config")
    edit_config(directory, num_hidden_layers=1)  # the same cut, but by a config that does not say its checkpoint
    with pytest.raises(InputError, match=r"16 of the checkpoint unused: encoder\.layer\.1\.attention\.output\."
                                         r"LayerNorm\.bias, .* and 13 more"):
        load_backbone(directory)


def test_the_offline_minilm_loads_complete():
    backbone = load_backbone("offline:all-MiniLM-L6-v2")
    assert type(backbone).__name__ == "BertModel" and len(backbone.encoder.layer) == 6
