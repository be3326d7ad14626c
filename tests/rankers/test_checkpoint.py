import json

import pytest
import torch
from torch import nn

from posbias.rankers.heads.chunk_scores import ChunkScores
from posbias.rankers.checkpoint import LEGACY_HEAD, STATE, load_checkpoint, save_checkpoint
from posbias.rankers.chunking import Chunker
from posbias.rankers.base import ChunkRanker
from posbias.rankers.declaration import Argument, Chunking, RankerDeclaration
from posbias.rankers.declarations.base import with_chunk_arguments
from posbias.rankers.registry import RANKERS, build_ranker


class TemperedMaxP(ChunkRanker):
    """A ranker with an argument of its own and a parameter outside the head."""

    def __init__(self, temperature: float = 1.0, **base):
        super().__init__(**base)
        self.temperature = nn.Parameter(torch.tensor(temperature))

    def make_head(self, backbone):
        return ChunkScores(backbone.config.hidden_size, "max", self.head_dropout)

    def forward(self, batch):
        return super().forward(batch) / self.temperature


@pytest.fixture
def tempered(monkeypatch):
    temperature = Argument("temperature", {"type": "number"}, default=1.0)
    monkeypatch.setitem(RANKERS, "tempered_maxp", RankerDeclaration(
        "tempered_maxp", "test", Chunking.OVERLAPPING_WINDOWS, with_chunk_arguments(temperature),
        f"{__name__}:TemperedMaxP"))


def geometry(backbone):
    return dict(backbone=backbone, max_query_tokens=6, chunk_tokens=8, stride=8, max_doc_tokens=24)


def scores(ranker, tokenizer):
    chunker = Chunker(tokenizer, ranker.geometry)
    query = tokenizer("capital of zorvia", add_special_tokens=False)["input_ids"]
    doc = tokenizer(" ".join(["zorvia has a capital"] * 5), add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        return ranker(chunker.batch([(query, doc)]))


def test_a_subclass_argument_and_its_own_parameter_round_trip(tempered, tiny_backbone, tokenizer, tmp_path):
    with pytest.raises(ValueError, match=r"unknown arguments \['temprature'\]"):
        build_ranker("tempered_maxp", {**geometry(tiny_backbone), "temprature": 2.5})
    ranker = build_ranker("tempered_maxp", {**geometry(tiny_backbone), "temperature": 2.5}).eval()
    assert id(ranker.temperature) in {id(p) for p in ranker.head_parameters()}
    with torch.no_grad():
        ranker.temperature.fill_(7.0)  # as training would move it
    save_checkpoint(ranker, tokenizer, str(tmp_path / "ckpt"))
    assert json.loads((tmp_path / "ckpt" / "ranker.json").read_text())["args"]["temperature"] == 2.5
    loaded, _ = load_checkpoint(str(tmp_path / "ckpt"))
    assert loaded.args["temperature"] == 2.5 and loaded.temperature.item() == 7.0
    assert torch.equal(scores(loaded, tokenizer), scores(ranker, tokenizer))


def test_the_checkpoint_holds_all_but_the_backbone_and_refuses_a_partial_state(tiny_backbone, tokenizer, tmp_path):
    ranker = build_ranker("maxp", geometry(tiny_backbone))
    save_checkpoint(ranker, tokenizer, str(tmp_path / "ckpt"))
    saved = torch.load(tmp_path / "ckpt" / STATE)
    # the backbone's weights live once, in backbone/ (a Hugging Face model directory); the rest in ranker.pt
    assert saved.keys() == {k for k in ranker.state_dict() if not k.startswith("encoder.backbone.")}
    del saved["head.score.weight"]
    torch.save(saved, tmp_path / "ckpt" / STATE)
    with pytest.raises(ValueError, match=r"ranker\.pt: not the state of a maxp ranker \(missing "
                                         r"\['head\.score\.weight'\]"):
        load_checkpoint(str(tmp_path / "ckpt"))


def test_a_checkpoint_from_before_the_whole_state_still_loads(tiny_backbone, tokenizer, tmp_path):
    ranker = build_ranker("maxp", geometry(tiny_backbone)).eval()
    save_checkpoint(ranker, tokenizer, str(tmp_path / "ckpt"))
    # the earlier layout: the aggregator alone in head.pt, and no arguments added since
    (tmp_path / "ckpt" / STATE).unlink()
    torch.save(ranker.head.state_dict(), tmp_path / "ckpt" / LEGACY_HEAD)
    description = json.loads((tmp_path / "ckpt" / "ranker.json").read_text())
    for added in ("head_dropout", "pad_query"):
        del description["args"][added]
    (tmp_path / "ckpt" / "ranker.json").write_text(json.dumps(description))
    loaded, _ = load_checkpoint(str(tmp_path / "ckpt"))
    assert torch.equal(scores(loaded, tokenizer), scores(ranker, tokenizer))


def test_a_checkpoint_whose_head_was_called_aggregator_still_loads(tiny_backbone, tokenizer, tmp_path):
    ranker = build_ranker("maxp", geometry(tiny_backbone)).eval()
    save_checkpoint(ranker, tokenizer, str(tmp_path / "ckpt"))
    saved = torch.load(tmp_path / "ckpt" / STATE)
    torch.save({k.replace("head.", "aggregator.", 1): v for k, v in saved.items()}, tmp_path / "ckpt" / STATE)
    loaded, _ = load_checkpoint(str(tmp_path / "ckpt"))
    assert torch.equal(scores(loaded, tokenizer), scores(ranker, tokenizer))


def test_a_backbone_missing_weights_is_refused_not_initialised_at_random(tiny_backbone, tokenizer, tmp_path):
    from safetensors.torch import load_file, save_file

    save_checkpoint(build_ranker("maxp", geometry(tiny_backbone)), tokenizer, str(tmp_path / "ckpt"))
    weights = tmp_path / "ckpt" / "backbone" / "model.safetensors"
    state = load_file(weights)
    dropped = next(k for k in state if "layer.1.output.dense.weight" in k)
    del state[dropped]
    save_file(state, weights, metadata={"format": "pt"})
    with pytest.raises(ValueError, match=r"the backbone .*ckpt/backbone. does not fit its class .*BertModel: weights 1 missing from the checkpoint \(they would be random\): encoder\.layer\.1\.output\.dense\.weight"):
        load_checkpoint(str(tmp_path / "ckpt"))
