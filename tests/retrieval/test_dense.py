"""The dense encoder: unit vectors, batching and padding that never change a vector, pooling, prefixes."""

import numpy as np
import pytest
import torch

from posbias.retrieval import dense
from posbias.retrieval.dense import DenseEncoder

TEXTS = ["a short one",
         "a considerably longer passage about the mountains of brel and the rivers that run down from them",
         "mid length text about bakeries",
         "x"]


@pytest.fixture(scope="module")
def encoder(tiny_backbone):
    return DenseEncoder(tiny_backbone, pooling="mean", max_query_tokens=16, max_passage_tokens=64, batch_size=4)


def test_vectors_are_unit_norm_float32_in_input_order(encoder):
    vectors = encoder.encode_passages(TEXTS, progress=False)
    assert vectors.shape == (len(TEXTS), 32) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    reversed_vectors = encoder.encode_passages(TEXTS[::-1], progress=False)
    np.testing.assert_allclose(reversed_vectors[::-1], vectors, atol=1e-6)
    assert encoder.encode_queries([]).shape == (0, 32)


def test_batching_and_padding_do_not_change_vectors(encoder, monkeypatch):
    together = encoder.encode_passages(TEXTS, progress=False)  # one batch, padded to the longest text
    alone = np.concatenate([encoder.encode_passages([text], progress=False) for text in TEXTS])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    monkeypatch.setattr(dense, "SORT_BLOCK", 3)  # blocks of 3 + 1 texts, each sorted on its own
    np.testing.assert_allclose(encoder.encode_passages(TEXTS, progress=False), together, atol=1e-5)
    assert np.abs(together[0] - together[3]).max() > 1e-3  # different texts, different vectors


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_pooling_matches_a_direct_forward_pass(tiny_backbone, pooling):
    encoder = DenseEncoder(tiny_backbone, pooling=pooling, max_passage_tokens=64)
    tokens = encoder.tokenizer(TEXTS[1], return_tensors="pt")
    with torch.no_grad():
        hidden = encoder.model.backbone(**tokens).last_hidden_state[0]
    expected = hidden[0] if pooling == "cls" else hidden.mean(dim=0)
    expected = (expected / expected.norm()).numpy()
    np.testing.assert_allclose(encoder.encode_passages([TEXTS[1]], progress=False)[0], expected, atol=1e-5)


def test_prefixes_and_token_limits_apply_to_their_side(tiny_backbone):
    encoder = DenseEncoder(tiny_backbone, query_prefix="query: ", passage_prefix="passage: ",
                           max_query_tokens=8, max_passage_tokens=64)
    plain = DenseEncoder(tiny_backbone, max_query_tokens=64, max_passage_tokens=8)
    np.testing.assert_allclose(encoder.encode_queries(["capital of zorvia"]),
                               plain.encode_passages(["query: capital of zorvia"], progress=False), atol=1e-6)
    np.testing.assert_allclose(encoder.encode_passages(["capital of zorvia"], progress=False),
                               plain.encode_queries(["passage: capital of zorvia"]), atol=1e-6)
    # Queries are cut at 8 tokens ([CLS], 6 words, [SEP]): words past the limit change nothing.
    cut = encoder.encode_queries(["one two three four five six", "one two three four five six seven eight"])
    np.testing.assert_allclose(cut[0], cut[1], atol=1e-6)


def test_settings_errors_name_the_key(tiny_backbone):
    with pytest.raises(ValueError, match="max_passage_tokens=512 exceeds the 128 positions"):
        DenseEncoder(tiny_backbone)  # the tiny backbone has 128 positions, the default limit is 512
    with pytest.raises(ValueError, match=r"unknown keys \['poolling'\]"):
        DenseEncoder.from_config({"model": tiny_backbone, "poolling": "mean"})
    with pytest.raises(ValueError, match=r"missing keys \['model'\]"):
        DenseEncoder.from_config({"pooling": "mean"})
    with pytest.raises(ValueError, match="pooling must be one of"):
        DenseEncoder(tiny_backbone, pooling="max", max_passage_tokens=64)
    with pytest.raises(ValueError, match=r"head must be one of \('none', 'ance'\), got 'dpr'"):
        DenseEncoder(tiny_backbone, head="dpr", max_passage_tokens=64)
    with pytest.raises(ValueError, match="head 'ance' projects the CLS vector, so pooling must be 'cls', got 'mean'"):
        DenseEncoder.from_config({"model": tiny_backbone, "head": "ance", "pooling": "mean"})


def test_numerics_name_the_device_and_precision(tiny_backbone):
    encoder = DenseEncoder(tiny_backbone, max_passage_tokens=64, device="cpu")
    assert encoder.numerics() == {"device": "cpu", "precision": "fp32"}
    if torch.cuda.is_available():
        assert DenseEncoder(tiny_backbone, max_passage_tokens=64, device="cuda").numerics() == \
            {"device": "cuda", "precision": "fp16"}


def test_remote_code_is_not_trusted_unless_asked(tiny_backbone, monkeypatch):
    import transformers

    seen = []
    original = transformers.AutoModel.from_pretrained
    monkeypatch.setattr(transformers.AutoModel, "from_pretrained",
                        lambda *args, **kwargs: seen.append(kwargs["trust_remote_code"]) or original(*args, **kwargs))
    DenseEncoder.from_config({"model": tiny_backbone, "max_passage_tokens": 64})
    assert seen == [False]


def test_offline_minilm_ranks_the_relevant_passage_first():
    encoder = DenseEncoder("offline:all-MiniLM-L6-v2", pooling="mean", max_passage_tokens=64)
    query = encoder.encode_queries(["what is the capital of france"])[0]
    passages = encoder.encode_passages(["Paris is the capital and largest city of France.",
                                        "The bakery opens early on Sundays.",
                                        "Mount Everest is the highest mountain on Earth."], progress=False)
    cosines = passages @ query
    assert cosines.argmax() == 0 and cosines[0] > cosines[1:].max() + 0.2
