"""MOSAIC BERT with MosaicML's own modelling code (tests/rankers/data/mosaic_bert/, unmodified) in the hub's layout:
config.json's `auto_map` names only `AutoConfig` and `AutoModelForMaskedLM`, as every mosaicml/mosaic-bert-base*
config does. It loads as its own class (not transformers' BERT with MOSAIC's layers dropped), FirstP, MaxP and LongP
score what its own masked forward gives, its ALiBi sets no position limit, it is never packed, and a checkpoint
reloads as MOSAIC from its own files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from posbias.errors import InputError
from posbias.rankers.checkpoint import load_checkpoint, save_checkpoint
from posbias.rankers.encoder import load_backbone
from posbias.rankers.features import ChunkFeatures
from posbias.rankers.registry import build_ranker

CODE = Path(__file__).parent / "data" / "mosaic_bert"
ALIBI_STARTING_SIZE = 16  # shorter than LongP's input here: MOSAIC extends its ALiBi bias at run time


def hub_layout(directory: Path) -> None:
    """The published files as the hub holds them: siblings imported relatively (see the fixture's README)."""
    for source in sorted(CODE.glob("*.py")):
        (directory / source.name).write_text(source.read_text().replace("from examples.bert.src.", "from ."))


@pytest.fixture(scope="module")
def mosaic(tmp_path_factory, tokenizer) -> str:
    """A 2-layer, 32-wide random MosaicBERT masked LM (safetensors weights) with the MiniLM tokenizer."""
    from safetensors.torch import save_file
    from transformers import AutoConfig, AutoModelForMaskedLM

    directory = tmp_path_factory.mktemp("mosaic-bert")
    hub_layout(directory)
    (directory / "config.json").write_text(json.dumps({
        "architectures": ["BertForMaskedLM"], "model_type": "bert",
        "auto_map": {"AutoConfig": "configuration_bert.BertConfig",
                     "AutoModelForMaskedLM": "bert_layers.BertForMaskedLM"},
        "alibi_starting_size": ALIBI_STARTING_SIZE, "max_position_embeddings": 32, "vocab_size": tokenizer.vocab_size,
        "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
        "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.0,
        "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0}))
    torch.manual_seed(0)
    model = AutoModelForMaskedLM.from_config(AutoConfig.from_pretrained(directory, trust_remote_code=True),
                                             trust_remote_code=True)
    # its decoder shares the word embeddings, which save_pretrained of transformers 5 refuses: written as the hub's
    # checkpoint holds them, both names
    save_file({k: v.detach().clone() for k, v in model.state_dict().items()}, directory / "model.safetensors",
              metadata={"format": "pt"})
    tokenizer.save_pretrained(directory)
    return str(directory)


def saved_weights(directory: str) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(Path(directory) / "model.safetensors")


def own_bert(directory: str):
    """MOSAIC's BertModel built by its own code and given the checkpoint's weights directly, not through posbias."""
    from transformers import AutoConfig, AutoModelForMaskedLM

    config = AutoConfig.from_pretrained(directory, trust_remote_code=True)
    model = AutoModelForMaskedLM.from_config(config, trust_remote_code=True)
    model.load_state_dict(saved_weights(directory))
    return model.bert.eval()


def test_it_loads_as_its_own_class_with_every_weight_of_the_checkpoint(mosaic):
    from posbias.remote_code import is_remote_code

    backbone = load_backbone(mosaic, trust_remote_code=True)
    assert is_remote_code(backbone) and type(backbone).__module__.endswith(".bert_layers")
    assert type(backbone).__name__ == "BertModel"  # MOSAIC's, the masked LM's `.bert`
    saved = saved_weights(mosaic)
    state = backbone.state_dict()
    assert {f"bert.{key}" for key in state} == {key for key in saved if key.startswith("bert.")}
    assert all(torch.equal(value, saved[f"bert.{key}"]) for key, value in state.items())
    assert len(load_backbone(mosaic, layers=1, trust_remote_code=True).encoder.layer) == 1  # cut on purpose


def test_read_as_transformers_bert_its_unused_layers_are_an_error(mosaic, monkeypatch):
    """What transformers does with the hub layout when asked for an AutoModel: its own BertModel, which leaves
    MOSAIC's attention and feed-forward weights unused and initialises BERT's at random."""
    monkeypatch.setattr("posbias.backbones.backbone_class", lambda config, path: None)
    with pytest.raises(InputError, match=r"the backbone '.*mosaic-bert.*' does not fit its class "
                                         r"transformers\.models\.bert\.modeling_bert\.BertModel: weights \d+ missing "
                                         r"from the checkpoint \(they would be random\): embeddings\.position_embed"
                                         r".*; \d+ of the checkpoint unused: bert\.encoder\.layer\.0\.attention\.self"
                                         r"\.Wqkv\.bias"):
        load_backbone(mosaic, trust_remote_code=True)


RANKERS = {  # query padded (masked slots inside the input), chunks of several lengths
    "firstp": dict(max_query_tokens=6, chunk_tokens=12, stride=12, max_doc_tokens=12, pad_query=True),
    "maxp": dict(max_query_tokens=6, chunk_tokens=12, stride=8, max_doc_tokens=40, pad_query=True),
    # longer than alibi_starting_size and than the config's 32 max_position_embeddings
    "longp": dict(max_query_tokens=6, chunk_tokens=60, stride=60, max_doc_tokens=60, pad_query=True),
}
DOCS = ["the capital of zorvia is mendal " * 6, "filler words here", "mendal " * 30]


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_rankers_score_what_its_own_masked_forward_gives(mosaic, tokenizer, name):
    ranker = build_ranker(name, dict(backbone=mosaic, trust_remote_code=True, **RANKERS[name])).eval()
    ids = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    batch = ranker.featurizer(tokenizer).batch([(ids("capital of zorvia"), ids(doc)) for doc in DOCS])
    with torch.no_grad():
        features = ranker.encoder(batch)
        scores = ranker(batch)
        rows = batch.chunk_mask.reshape(-1)
        width = batch.input_ids.shape[-1]
        states, _ = own_bert(mosaic)(batch.input_ids.reshape(-1, width)[rows],
                                     batch.token_type_ids.reshape(-1, width)[rows],
                                     batch.attention_mask.reshape(-1, width)[rows])
        expected = torch.zeros_like(features.pooled).view(-1, states.shape[-1])
        expected[rows] = states[:, 0]  # the [CLS] vector of each valid chunk
        expected = expected.view_as(features.pooled)
        torch.testing.assert_close(features.pooled, expected, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(scores, ranker.head(ChunkFeatures(expected, batch.chunk_mask)),
                                   rtol=1e-5, atol=1e-5)
    assert batch.input_ids.shape[-1] > ALIBI_STARTING_SIZE or name != "longp"


def test_its_alibi_sets_no_position_limit(mosaic):
    from posbias.rankers.geometry import check_geometry, geometry_limit

    assert geometry_limit(mosaic, trust_remote_code=True) is None  # not the config's 32 max_position_embeddings
    check_geometry("longp", dict(backbone=mosaic, trust_remote_code=True, max_query_tokens=32, chunk_tokens=1431,
                                 stride=1431, max_doc_tokens=1431))  # the study's LongP MOSAIC: accepted


def test_it_is_never_packed(mosaic):
    from posbias.rankers.first_token import supports_first_token_only
    from posbias.rankers.packing import supports_packing, use_packing

    backbone = load_backbone(mosaic, trust_remote_code=True)
    assert not supports_packing(backbone) and not use_packing(True, backbone, torch.device("cuda"))
    assert not supports_first_token_only(backbone)


def test_every_layers_states_are_refused_not_misread(mosaic, tokenizer):
    from posbias.rankers.encoder import ChunkEncoder

    ranker = build_ranker("maxp", dict(backbone=mosaic, trust_remote_code=True, **RANKERS["maxp"])).eval()
    encoder = ChunkEncoder(ranker.encoder.backbone, token_layers="all")
    ids = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    with pytest.raises(InputError, match=r"does not return every layer's states"):
        encoder(ranker.featurizer(tokenizer).batch([(ids("zorvia"), ids("mendal"))]))


def test_a_checkpoint_reloads_as_mosaic_from_its_own_files(mosaic, tokenizer, tmp_path):
    ranker = build_ranker("longp", dict(backbone=mosaic, trust_remote_code=True, **RANKERS["longp"])).eval()
    ids = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    pairs = [(ids("capital of zorvia"), ids(doc)) for doc in DOCS]
    with torch.no_grad():
        scores = ranker(ranker.featurizer(tokenizer).batch(pairs))
    save_checkpoint(ranker, tokenizer, str(tmp_path / "checkpoint"))
    backbone = tmp_path / "checkpoint" / "backbone"
    config = json.loads((backbone / "config.json").read_text())
    assert config["auto_map"]["AutoModel"] == "bert_layers.BertModel"
    assert config["auto_map"]["AutoConfig"] == "configuration_bert.BertConfig"
    assert {p.name for p in backbone.glob("*.py")} == {p.name for p in CODE.glob("*.py")}  # loads offline
    described = json.loads((tmp_path / "checkpoint" / "ranker.json").read_text())
    assert described["backbone_class"].startswith("transformers_modules.")
    assert described["backbone_class"].endswith(".bert_layers.BertModel")
    loaded, _ = load_checkpoint(str(tmp_path / "checkpoint"))
    assert type(loaded.encoder.backbone).__module__.endswith(".bert_layers")
    with torch.no_grad():
        torch.testing.assert_close(loaded(loaded.featurizer(tokenizer).batch(pairs)), scores, rtol=0, atol=0)
