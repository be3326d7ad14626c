"""The rankers over greedy disjoint chunks (CEDR-*, Neural Model 1): geometry and head sizes."""

import pytest
import torch

from posbias.errors import InputError
from posbias.rankers import catalog
from posbias.rankers.registry import RANKERS, build_ranker


def args(backbone, **overrides):
    return {"backbone": backbone, "max_query_tokens": 6, "chunk_tokens": 8, "stride": 8, "max_doc_tokens": 24,
            **overrides}


def test_disjoint_chunk_rankers_are_registered():
    assert catalog.DISJOINT_CHUNKS <= set(RANKERS)


@pytest.mark.parametrize("name", sorted(catalog.DISJOINT_CHUNKS))
def test_overlapping_windows_are_refused(name, tiny_backbone):
    with pytest.raises(InputError, match=rf"{name} reads greedy disjoint chunks: stride \(6\) must equal chunk_tokens"):
        build_ranker(name, args(tiny_backbone, stride=6))


def test_cedr_heads_read_every_channel_and_max_query_tokens_slots(tiny_backbone):
    # the tiny backbone: 2 layers, hidden 32, so 3 channels
    knrm = build_ranker("cedr_knrm", args(tiny_backbone))
    assert knrm.encoder.token_layers == "all" and knrm.head.score.in_features == 11 * 3 + 32
    pacrr = build_ranker("cedr_pacrr", args(tiny_backbone, max_query_tokens=7))
    assert pacrr.head.convolutions[2].in_channels == 3 and pacrr.head.hidden_1.in_features == 32 + 7 * 3 * 2
    drmm = build_ranker("cedr_drmm", args(tiny_backbone, mask_query_padding=False))
    assert drmm.head.hidden_1.in_features == 11 * 3 + 32 and not drmm.head.mask_query_padding
    assert drmm.args["mask_query_padding"] is False


def test_neural_model1_reads_the_last_layer_and_no_pooled_vector(tiny_backbone, tokenizer):
    ranker = build_ranker("neural_model1", args(tiny_backbone, projection_size=16))
    assert ranker.encoder.token_layers == "last"
    assert ranker.head.query_projection[0].out_features == 16
    assert build_ranker("neural_model1", args(tiny_backbone)).head.doc_projection[0].out_features == 32
    with pytest.raises(InputError, match="projection_size"):
        build_ranker("neural_model1", args(tiny_backbone, projection_size=0))


@pytest.mark.parametrize("pad_query", [False, True])
@pytest.mark.parametrize("name", ["cedr_pacrr", "cedr_drmm"])
def test_short_queries_fill_the_fixed_query_slots(name, pad_query, tiny_backbone, tokenizer):
    torch.manual_seed(0)
    ranker = build_ranker(name, args(tiny_backbone, pad_query=pad_query, max_query_tokens=10)).eval()
    featurizer = ranker.featurizer(tokenizer)
    query = tokenizer("zorvia", add_special_tokens=False)["input_ids"]
    doc = tokenizer("the capital of zorvia is mendal and more", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        assert torch.isfinite(ranker(featurizer.batch([(query, doc)]))).all()
