"""Attention calibration of a bi-encoder (`posbias.scoring.embedder_calibration`): exact on planted attention, a
no-op where there is nothing to balance, the model restored after the context, mistakes one line."""

from __future__ import annotations

import pytest
import torch

from posbias.errors import InputError
from posbias.scoring.embedder_calibration import Calibration, calibrate_weights, calibrated, encode_calibrated

LONG = " ".join(f"word{i % 7} fact{i % 5}" for i in range(60))  # about 200 WordPiece tokens: cut at 64


def basket_shares(weights, basket, lead=0):
    """Each row's attention summed over consecutive baskets (the first `lead` tokens a basket of their own)."""
    rows = [weights[..., :lead].sum(-1, keepdim=True)] if lead else []
    rows += [part.sum(-1, keepdim=True) for part in weights[..., lead:].split(basket, dim=-1)]
    return torch.cat(rows, dim=-1)


def planted(n_keys, decay=0.8, seed=0):
    """Attention rows with a planted primacy bias (each key's weight times decay ** its position), softmax-like."""
    generator = torch.Generator().manual_seed(seed)
    content = torch.rand(1, 2, n_keys, n_keys, generator=generator) + 0.1
    weights = content * decay ** torch.arange(n_keys, dtype=torch.float32)
    return weights / weights.sum(-1, keepdim=True)


def test_a_planted_positional_bias_is_removed_and_each_basket_keeps_its_proportions():
    weights, valid = planted(12), torch.ones(1, 12, dtype=torch.bool)
    out = calibrate_weights(weights, valid, "mean", Calibration(basket=4, strength=1.0))
    assert basket_shares(weights, 4)[0, 0, 0].tolist() != pytest.approx([1 / 3] * 3)  # planted: front-loaded
    assert basket_shares(out, 4).flatten().tolist() == pytest.approx([1 / 3] * (2 * 12 * 3))
    within = out[..., 4:8] / out[..., 4:8].sum(-1, keepdim=True)
    assert torch.allclose(within, weights[..., 4:8] / weights[..., 4:8].sum(-1, keepdim=True))
    half = calibrate_weights(weights, valid, "mean", Calibration(basket=4, strength=0.25))
    assert torch.allclose(half, 0.25 * out + 0.75 * weights)  # lambda mixes calibrated and original


def test_attention_already_even_over_baskets_is_left_as_it_is():
    weights = planted(12)
    shares = basket_shares(weights, 4)
    even = weights / shares.repeat_interleave(4, dim=-1) / 3  # every basket a third, proportions kept
    out = calibrate_weights(even, torch.ones(1, 12, dtype=torch.bool), "mean", Calibration(basket=4, strength=1.0))
    assert torch.allclose(out, even, atol=1e-7)


def test_cls_pooling_calibrates_the_first_row_with_the_cls_token_a_basket_of_its_own():
    weights, valid = planted(9), torch.ones(1, 9, dtype=torch.bool)
    out = calibrate_weights(weights, valid, "cls", Calibration(basket=4, strength=1.0))
    assert basket_shares(out[:, :, :1], 4, lead=1).flatten().tolist() == pytest.approx([1 / 3] * 6)
    assert torch.equal(out[:, :, 1:], weights[:, :, 1:])  # rows pooling does not read


def test_padding_and_texts_shorter_than_a_basket_are_untouched():
    weights = planted(10)
    valid = torch.tensor([[True] * 3 + [False] * 7])  # three real tokens: less than one basket of 4
    assert torch.equal(calibrate_weights(weights, valid, "mean", Calibration(basket=4, strength=1.0)), weights)
    valid = torch.tensor([[True] * 8 + [False] * 2])
    weights = weights * valid.view(1, 1, 1, 10)
    weights = weights / weights.sum(-1, keepdim=True)
    out = calibrate_weights(weights, valid, "mean", Calibration(basket=4, strength=1.0))
    assert torch.equal(out[:, :, 8:], weights[:, :, 8:]) and torch.all(out[..., 8:] == 0)
    assert basket_shares(out[:, :, :8, :8], 4).flatten().tolist() == pytest.approx([0.5] * 32)


@pytest.fixture(scope="module")
def tiny_st(tiny_backbone, tmp_path_factory):
    """A sentence-transformers model of the tiny random BERT (2 layers, mean pooling, 64 tokens), its queries
    scaled up: a random init's attention is almost uniform, with little to calibrate."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    path = tmp_path_factory.mktemp("tiny-st")
    model = SentenceTransformer(modules=[Transformer(tiny_backbone, max_seq_length=64), Pooling(32, "mean")],
                                device="cpu")
    with torch.no_grad():
        for layer in model[0].auto_model.encoder.layer:
            layer.attention.self.query.weight.mul_(50)
    model.save(str(path))
    return str(path)


@pytest.fixture
def model(tiny_st):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(tiny_st, device="cpu")


def test_the_calibrated_layers_attend_evenly_over_baskets_and_the_others_as_before(model):
    features = model.preprocess([LONG, "short text"])
    model[0].auto_model.set_attn_implementation("eager")  # sdpa returns no attention weights to compare
    with torch.no_grad():
        plain = model[0].auto_model(**features, output_attentions=True).attentions
        with calibrated(model, Calibration(basket=16, strength=1.0, depth=0.5)) as done:
            attentions = model[0].auto_model(**features, output_attentions=True).attentions
    assert done["layers"] == [1] and done["rows"] == "mean" and done["calls"] == [1]
    assert torch.allclose(attentions[0], plain[0], atol=1e-6)  # layer 0 is not calibrated
    shares = basket_shares(attentions[1][:1], 16)  # 64 tokens: 4 baskets of 16
    assert shares.flatten().tolist() == pytest.approx([0.25] * shares.numel(), abs=1e-5)
    assert not torch.allclose(basket_shares(plain[1][:1], 16), shares, atol=1e-3)  # the random model's own bias
    assert torch.allclose(attentions[1][1], plain[1][1], atol=1e-6)  # a short text: nothing to balance


def test_uniform_attention_over_whole_baskets_leaves_the_embeddings_unchanged(model):
    transformer = model[0].auto_model
    with torch.no_grad():
        for layer in transformer.encoder.layer:  # zero queries: every token attends to every token alike
            layer.attention.self.query.weight.zero_()
            layer.attention.self.query.bias.zero_()
    before = model.encode([LONG], convert_to_tensor=True)  # 64 tokens: whole baskets of 16
    after = encode_calibrated(model, Calibration(basket=16, strength=1.0, depth=1.0), model.encode, [LONG],
                              convert_to_tensor=True)
    assert torch.allclose(before, after, atol=1e-5)


def test_the_model_is_restored_after_the_context_even_when_encoding_fails(model):
    transformer = model[0].auto_model
    before, implementation = model.encode([LONG, "short text"]), transformer.config._attn_implementation
    calibration = Calibration(basket=16, strength=1.0)
    changed = encode_calibrated(model, calibration, model.encode, [LONG, "short text"])
    assert abs(changed[0] - before[0]).max() > 1e-4  # a long text's embedding moves
    assert abs(changed[1] - before[1]).max() < 1e-5  # a short one's does not
    with pytest.raises(RuntimeError, match="boom"):
        with calibrated(model, calibration):
            raise RuntimeError("boom")
    assert transformer.config._attn_implementation == implementation
    assert not transformer._forward_pre_hooks
    assert not any(hasattr(module, "_posbias_calibration") for module in transformer.modules())
    assert (model.encode([LONG, "short text"]) == before).all()


def test_the_bi_encoder_spec_reads_its_calibration(tiny_st):
    from posbias.audit.models import load_pair_model
    from posbias.audit.spec import parse_model_spec

    scorer = load_pair_model(parse_model_spec(f"bi-encoder:{tiny_st}?calibration_basket=16"), "unused", "off", "cpu")
    assert scorer.describe()["calibration"] == {"basket": 16, "strength": 0.5, "depth": 0.5}
    plain = load_pair_model(parse_model_spec(f"bi-encoder:{tiny_st}"), "unused", "off", "cpu")
    pairs = [("fact3", LONG), ("fact3", "short text")]
    assert scorer.score(pairs)[0] != pytest.approx(plain.score(pairs)[0], abs=1e-6)
    assert scorer.score(pairs)[1] == pytest.approx(plain.score(pairs)[1], abs=1e-5)


@pytest.mark.parametrize("settings, message", [
    ({"basket": 0}, "basket must be a positive whole number, got 0"),
    ({"strength": 0}, r"strength must be a number in \(0, 1\], got 0"),
    ({"depth": 1.5}, r"depth must be a number in \(0, 1\], got 1.5"),
])
def test_calibration_mistakes_are_one_line(settings, message):
    with pytest.raises(InputError, match=message):
        Calibration(**settings)


def test_spec_options_out_of_range_are_refused():
    from posbias.audit.spec import parse_model_spec

    with pytest.raises(InputError, match=r"option calibration_strength must be a number in \(0, 1\], got '2'"):
        parse_model_spec("bi-encoder:offline:x?calibration_strength=2")
    with pytest.raises(InputError, match="unknown option 'calibration_basket' for a cross-encoder"):
        parse_model_spec("cross-encoder:offline:x?calibration_basket=16")
