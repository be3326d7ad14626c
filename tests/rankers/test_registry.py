import dataclasses
import inspect

import pytest
import torch

from posbias.rankers import catalog
from posbias.rankers.checkpoint import load_checkpoint, save_checkpoint
from posbias.rankers.declaration import REQUIRED
from posbias.rankers.registry import RANKERS, build_ranker


# Ranker arguments that name a further pretrained model: the tiny backbone serves as that model.
PRETRAINED_ARGUMENTS = ("aggregator", "interaction_model")


def args(backbone, name):
    if name in catalog.ONE_SEQUENCE:
        geometry = dict(max_query_tokens=6, chunk_tokens=24, stride=24, max_doc_tokens=24)
    else:
        geometry = dict(max_query_tokens=6, chunk_tokens=8, stride=8, max_doc_tokens=8 if name == "firstp" else 24)
    pretrained = {argument: backbone for argument in PRETRAINED_ARGUMENTS if argument in catalog.arguments(name)}
    return dict(backbone=backbone, **geometry, **pretrained)


def test_registry_has_the_study_models():
    assert {"firstp", "maxp", "sump", "avgp", "parade_avg", "parade_max", "parade_attn"} <= set(RANKERS)


def constructor_parameters(cls: type) -> dict[str, inspect.Parameter]:
    """The named constructor arguments of a ranker class, by name, in the order `build_ranker` records them: a
    subclass that takes `**kwargs` and passes them on to its parent's `__init__` accepts the parent's too."""
    parameters: dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        passes_on = False
        for name, spec in inspect.signature(klass.__init__).parameters.items():
            if spec.kind is inspect.Parameter.VAR_KEYWORD:
                passes_on = True
            elif name != "self" and spec.kind is not inspect.Parameter.VAR_POSITIONAL:
                parameters.setdefault(name, spec)
        if not passes_on:
            break
    return parameters


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_each_declaration_lists_its_class_constructor_arguments_and_defaults_in_order(name):
    declared = [(argument.name, argument.default) for argument in RANKERS[name].arguments]
    taken = [(parameter, REQUIRED if spec.default is inspect.Parameter.empty else spec.default)
             for parameter, spec in constructor_parameters(RANKERS[name].load_class()).items()]
    assert declared == taken


def test_rankgpts_declaration_lists_its_settings_and_their_defaults():
    from posbias.rankers.rankgpt import RankGPTSettings

    declared = [(argument.name, argument.default) for argument in catalog.BY_NAME["rankgpt"].arguments]
    assert declared == [("llm", REQUIRED)] + [(f.name, f.default) for f in dataclasses.fields(RankGPTSettings)]


def test_the_registry_builds_every_torch_ranker_and_only_those():
    assert set(RANKERS) == catalog.IMPLEMENTED


def test_strict_arguments(tiny_backbone):
    with pytest.raises(ValueError, match=r"unknown arguments \['chunk_len'\]"):
        build_ranker("maxp", {**args(tiny_backbone, "maxp"), "chunk_len": 5})
    with pytest.raises(ValueError, match=r"missing arguments \['stride'\]"):
        build_ranker("maxp", {k: v for k, v in args(tiny_backbone, "maxp").items() if k != "stride"})
    with pytest.raises(ValueError, match="unknown ranker 'maxq'"):
        build_ranker("maxq", args(tiny_backbone, "maxp"))
    with pytest.raises(ValueError, match="firstp reads one chunk"):
        build_ranker("firstp", args(tiny_backbone, "maxp"))


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_every_ranker_scores_deterministically_ignores_padding_and_round_trips(name, tiny_backbone, tokenizer,
                                                                               tmp_path):
    torch.manual_seed(0)
    ranker = build_ranker(name, args(tiny_backbone, name)).eval()
    chunker = ranker.featurizer(tokenizer)
    query = tokenizer("capital of zorvia", add_special_tokens=False)["input_ids"]
    short = tokenizer("the capital of zorvia is mendal", add_special_tokens=False)["input_ids"]
    long = tokenizer(" ".join(["filler words here"] * 12), add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        alone = ranker(chunker.batch([(query, short)]))
        batched = ranker(chunker.batch([(query, short), (query, long)]))
        again = ranker(chunker.batch([(query, short), (query, long)]))
    assert torch.allclose(alone, batched[:1], atol=1e-5)  # padding to a longer neighbour changes nothing
    assert torch.equal(batched, again)
    save_checkpoint(ranker, tokenizer, str(tmp_path / "ckpt"))
    loaded, _ = load_checkpoint(str(tmp_path / "ckpt"))
    assert loaded.registry_name == name
    with torch.no_grad():
        assert torch.allclose(loaded(chunker.batch([(query, short), (query, long)])), batched, atol=1e-5)


def test_dropout_argument_replaces_every_dropout_probability(tiny_backbone, tmp_path, tokenizer):
    ranker = build_ranker("maxp", {**args(tiny_backbone, "maxp"), "dropout": 0.0})
    config = ranker.encoder.backbone.config
    assert config.hidden_dropout_prob == 0.0 and config.attention_probs_dropout_prob == 0.0
    assert all(m.p == 0.0 for m in ranker.modules() if isinstance(m, torch.nn.Dropout))
    default = build_ranker("maxp", args(tiny_backbone, "maxp"))
    assert default.encoder.backbone.config.hidden_dropout_prob > 0.0  # untouched without the argument
    save_checkpoint(ranker, tokenizer, tmp_path / "ckpt")
    reloaded, _ = load_checkpoint(tmp_path / "ckpt")
    assert reloaded.args["dropout"] == 0.0 and reloaded.encoder.backbone.config.hidden_dropout_prob == 0.0


def test_head_dropout_and_the_backbone_dropout_are_separate_arguments(tiny_backbone):
    ranker = build_ranker("parade_max", {**args(tiny_backbone, "parade_max"), "dropout": 0.0, "head_dropout": 0.3})
    assert ranker.head.dropout.p == 0.3
    backbone_dropouts = [m.p for m in ranker.encoder.backbone.modules() if isinstance(m, torch.nn.Dropout)]
    assert backbone_dropouts and set(backbone_dropouts) == {0.0}
    default = build_ranker("maxp", args(tiny_backbone, "maxp"))
    assert default.head.dropout.p == 0.0 and default.encoder.backbone.config.hidden_dropout_prob == 0.1


def test_pad_query_reaches_the_geometry_and_the_recorded_arguments_include_defaults(tiny_backbone):
    ranker = build_ranker("maxp", {**args(tiny_backbone, "maxp"), "pad_query": True})
    assert ranker.geometry.pad_query is True
    assert ranker.args == {**args(tiny_backbone, "maxp"), "pooling": "cls", "backbone_layers": None,
                           "trust_remote_code": False, "dropout": None, "head_dropout": 0.0, "pad_query": True,
                           "backbone_dtype": "float32"}


def test_head_parameters_are_everything_outside_the_backbone(tiny_backbone):
    ranker = build_ranker("parade_attn", args(tiny_backbone, "parade_attn"))
    head = {id(p) for p in ranker.head_parameters()}
    backbone = {id(p) for p in ranker.encoder.backbone.parameters()}
    assert head == {id(p) for p in ranker.parameters()} - backbone
    assert id(ranker.head.query_vector) in head


def test_a_ranker_class_built_without_the_registry_refuses_what_its_declaration_refuses():
    """The geometry rule is the declaration's (`Chunking.refusal`): a class built directly finds it by its name."""
    from posbias.rankers.chunked import FirstP
    from posbias.rankers.interaction import CedrKnrmRanker

    with pytest.raises(ValueError, match=r"firstp reads one chunk: max_doc_tokens \(16\) must equal chunk_tokens"):
        FirstP(backbone="never-loaded", max_query_tokens=4, chunk_tokens=8, stride=8, max_doc_tokens=16)
    with pytest.raises(ValueError, match=r"cedr_knrm reads greedy disjoint chunks: stride \(4\)"):
        CedrKnrmRanker(backbone="never-loaded", max_query_tokens=4, chunk_tokens=8, stride=4, max_doc_tokens=16)
