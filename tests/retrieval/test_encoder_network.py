"""sentence-transformers directories run their own modules (Pooling, Dense, LayerNorm, Normalize), and their
pooling must agree with the encoder settings."""

import numpy as np
import pytest

from posbias.retrieval.dense import DenseEncoder

TEXTS = ["the capital of zorvia is mendal, a city on the river",
         "bread and cakes from the old bakery in mendal",
         "x"]


@pytest.fixture(scope="module")
def tiny_sentence_transformer(tiny_backbone, tmp_path_factory) -> str:
    """The tiny BERT saved as a sentence-transformers model: CLS pooling, Dense 32 -> 16, LayerNorm, Normalize."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, LayerNorm, Normalize, Pooling, Transformer

    torch.manual_seed(0)
    transformer = Transformer(tiny_backbone, max_seq_length=64)
    modules = [transformer, Pooling(32, pooling_mode="cls"), Dense(32, 16), LayerNorm(16), Normalize()]
    with torch.no_grad():  # LayerNorm starts as the identity: make it visible
        modules[3].norm.weight.uniform_(0.5, 1.5)
        modules[3].norm.bias.normal_()
    path = tmp_path_factory.mktemp("tiny-st") / "model"
    SentenceTransformer(modules=modules, device="cpu").save(str(path))
    return str(path)


def test_a_sentence_transformers_model_runs_all_its_modules(tiny_sentence_transformer, tiny_backbone):
    from sentence_transformers import SentenceTransformer

    encoder = DenseEncoder(tiny_sentence_transformer, pooling="cls", max_passage_tokens=64, batch_size=2)
    assert encoder.dim == 16  # the Dense module's output, not the backbone's 32
    expected = SentenceTransformer(tiny_sentence_transformer, device="cpu").encode(TEXTS)
    np.testing.assert_allclose(encoder.encode_passages(TEXTS, progress=False), expected, atol=1e-5)


def test_the_offline_minilm_gives_the_vectors_of_sentence_transformers():
    from sentence_transformers import SentenceTransformer

    from posbias.backbones import resolve

    encoder = DenseEncoder("offline:all-MiniLM-L6-v2", pooling="mean", max_passage_tokens=256)
    expected = SentenceTransformer(resolve("offline:all-MiniLM-L6-v2"), device="cpu").encode(TEXTS)
    np.testing.assert_allclose(encoder.encode_passages(TEXTS, progress=False), expected, atol=1e-5)


def test_pooling_must_agree_with_the_model(tiny_sentence_transformer):
    with pytest.raises(ValueError, match=r"pooling is 'mean', but the sentence-transformers model '.*model' "
                                         r"pools by 'cls'; set pooling to match"):
        DenseEncoder(tiny_sentence_transformer, pooling="mean", max_passage_tokens=64)


def test_a_head_setting_is_refused_for_a_sentence_transformers_model(tiny_sentence_transformer):
    with pytest.raises(ValueError, match="head 'ance' is for plain checkpoints; '.*model' is a "
                                         "sentence-transformers model"):
        DenseEncoder(tiny_sentence_transformer, head="ance", pooling="cls", max_passage_tokens=64)
