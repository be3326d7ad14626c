"""The ANCE head: a checkpoint laid out like castorini's ANCE (RoBERTa + embeddingHead + norm) is encoded with
its projection and LayerNorm, and a checkpoint lacking them is an error, not a random head."""

import numpy as np
import pytest
import torch

from posbias.retrieval.ance import ANCE_DIM
from posbias.retrieval.dense import DenseEncoder

OFFLINE = "offline:all-MiniLM-L6-v2"
TEXT = "the capital of zorvia is mendal, a city on the river"


def write_ance_checkpoint(path, drop: tuple[str, ...] = ()) -> str:
    """A tiny random ANCE checkpoint as castorini stores one: a RoBERTa config, and one state dict holding the
    RoBERTa under `roberta.` next to `embeddingHead` (Linear hidden -> 768) and `norm` (LayerNorm 768)."""
    from transformers import AutoTokenizer, RobertaConfig, RobertaModel

    from posbias.backbones import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve(OFFLINE))  # a real vocabulary; the weights are random
    config = RobertaConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=2, intermediate_size=64, max_position_embeddings=130,
                           pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    roberta = RobertaModel(config, add_pooling_layer=False)
    state = {f"roberta.{key}": value for key, value in roberta.state_dict().items()}
    state["embeddingHead.weight"] = torch.randn(ANCE_DIM, 32) / 8
    state["embeddingHead.bias"] = torch.randn(ANCE_DIM)
    state["norm.weight"] = 1 + torch.rand(ANCE_DIM)  # not LayerNorm's initial values, so they must be loaded
    state["norm.bias"] = torch.randn(ANCE_DIM)
    path.mkdir()
    config.save_pretrained(path)
    tokenizer.save_pretrained(path)
    torch.save({key: value for key, value in state.items() if not key.startswith(drop)}, path / "pytorch_model.bin")
    return str(path)


@pytest.fixture(scope="module")
def ance_checkpoint(tmp_path_factory):
    return write_ance_checkpoint(tmp_path_factory.mktemp("ance") / "tiny-ance")


def test_the_ance_head_projects_and_normalises_the_cls_vector(ance_checkpoint):
    from transformers import AutoModel

    encoder = DenseEncoder(ance_checkpoint, head="ance", pooling="cls", max_passage_tokens=64)
    vector = encoder.encode_passages([TEXT], progress=False)[0]

    # By hand: the RoBERTa's CLS vector (AutoModel keeps the RoBERTa, drops the head), then the stored head.
    state = torch.load(f"{ance_checkpoint}/pytorch_model.bin")
    tokens = encoder.tokenizer(TEXT, return_tensors="pt", truncation=True, max_length=64)
    with torch.no_grad():
        cls = AutoModel.from_pretrained(ance_checkpoint)(**tokens).last_hidden_state[0, 0]
        projected = state["embeddingHead.weight"] @ cls + state["embeddingHead.bias"]
        expected = torch.nn.functional.layer_norm(projected, (ANCE_DIM,), state["norm.weight"], state["norm.bias"])
    np.testing.assert_allclose(vector, (expected / expected.norm()).numpy(), atol=1e-5)

    # Without the head, the same checkpoint gives the raw 32-wide CLS vector, which is not ANCE.
    raw = DenseEncoder(ance_checkpoint, pooling="cls", max_passage_tokens=64)
    assert (encoder.dim, raw.dim) == (ANCE_DIM, 32)
    np.testing.assert_allclose(raw.encode_passages([TEXT], progress=False)[0], (cls / cls.norm()).numpy(), atol=1e-5)


def test_missing_head_weights_are_an_error_naming_the_checkpoint_and_the_keys(tmp_path):
    checkpoint = write_ance_checkpoint(tmp_path / "no-norm", drop=("norm.",))
    with pytest.raises(ValueError, match=r"encoder checkpoint '.*no-norm' lacks weights of head 'ance'.*"
                                         r"missing norm\.bias, norm\.weight$"):
        DenseEncoder(checkpoint, head="ance", max_passage_tokens=64)


def test_a_checkpoint_without_any_head_is_an_error(tiny_backbone):
    with pytest.raises(ValueError, match=r"lacks weights of head 'ance'.*: missing embeddingHead\.bias, "
                                         r"embeddingHead\.weight, norm\.bias, norm\.weight$"):
        DenseEncoder(tiny_backbone, head="ance", max_passage_tokens=64)  # a plain BERT directory
