"""The packed encoder (one row of real tokens, attention cut at the chunks' bounds) against the padded one."""

import pytest
import torch

from posbias.rankers.chunking import ChunkGeometry, Chunker
from posbias.rankers.encoder import ChunkEncoder, load_backbone
from posbias.rankers.packing import PACKED_ATTENTION, pack, supports_packing, use_packing


def _batch(tokenizer, pad_query: bool = True):
    """Three pairs: chunks of 8, 8, 1 / 8, 3 / 2 document tokens, queries of 2, 3 and 1 tokens padded to 4."""
    chunker = Chunker(tokenizer, ChunkGeometry(max_query_tokens=4, chunk_tokens=8, stride=8, max_doc_tokens=24,
                                               pad_query=pad_query))
    doc = list(range(2000, 2024))
    return chunker.batch([([1101, 1102], doc[:17]), ([1201, 1202, 1203], doc[:11]), ([1301], doc[:2])])


def _encoders(backbone, pooling, token_layers=None):
    padded, packed = ChunkEncoder(backbone, pooling, token_layers), ChunkEncoder(backbone, pooling, token_layers)
    padded.packing, packed.packing = False, True
    return padded, packed


def test_packing_keeps_each_tokens_column_as_its_position_and_drops_every_masked_slot(tokenizer):
    batch = _batch(tokenizer)
    valid = batch.chunk_mask
    mask = batch.attention_mask[valid]
    inputs = {"input_ids": batch.input_ids[valid], "attention_mask": mask,
              "token_type_ids": batch.token_type_ids[valid]}
    packed = pack(inputs, mask)
    assert packed.inputs["input_ids"].shape == (1, int(mask.sum()))
    assert packed.cu_seqlens.tolist() == [0] + mask.sum(1).cumsum(0).tolist()
    # the third pair's one chunk: [CLS] q [pad pad pad] [SEP] d d [SEP] keeps its document at columns 6 and 7
    start, end = packed.cu_seqlens[-2:].tolist()
    assert packed.inputs["position_ids"][0, start:end].tolist() == [0, 1, 5, 6, 7, 8]
    assert 0 not in packed.inputs["input_ids"].tolist()[0]  # no [PAD] left
    states = torch.arange(end, dtype=torch.float32)[None, :, None]
    laid_out = packed.unpack(states)[..., 0]
    assert torch.equal(laid_out != 0, mask.bool() & (torch.arange(mask.numel()).view(mask.shape) != 0))


@pytest.mark.parametrize("pooling,token_layers", [("cls", None), ("mean", None), ("max", None), ("cls", "all")])
def test_packed_and_padded_encoders_give_the_same_vectors_and_token_states(tiny_backbone, tokenizer, pooling,
                                                                          token_layers):
    backbone = load_backbone(tiny_backbone).eval()
    padded, packed = _encoders(backbone, pooling, token_layers)
    batch = _batch(tokenizer)
    with torch.no_grad():
        expected, got = padded(batch), packed(batch)
    assert backbone.config._attn_implementation != PACKED_ATTENTION  # restored after the packed forward
    assert torch.allclose(got.pooled, expected.pooled, atol=1e-5)
    if token_layers:  # where tokens are real: a padded query's masked slots are computed padded, zeros packed
        query, doc = got.query_mask, got.doc_mask
        assert torch.allclose(got.query_states.transpose(1, 2)[query], expected.query_states.transpose(1, 2)[query],
                              atol=1e-5)
        assert torch.allclose(got.doc_states.transpose(1, 2)[doc], expected.doc_states.transpose(1, 2)[doc],
                              atol=1e-5)


@pytest.mark.parametrize("name", ["maxp", "cedr_knrm", "parade_transf_rand"])
def test_packed_scores_and_gradients_equal_the_padded_ones(tiny_backbone, tokenizer, name):
    """A ranker's scores and all its gradients, fp32 with dropout off (the acceptance's CPU check): a [CLS] ranker
    (the first-token shortcut), one reading token states, one aggregating chunk vectors."""
    from posbias.rankers.registry import build_ranker

    ranker = build_ranker(name, dict(backbone=tiny_backbone, max_query_tokens=4, chunk_tokens=8, stride=8,
                                       max_doc_tokens=24, pad_query=True, dropout=0.0))
    featurizer = ranker.featurizer(tokenizer)
    doc = list(range(2000, 2024))
    batch = featurizer.batch([([1101, 1102], doc[:17]), ([1201, 1202, 1203], doc[:11]), ([1301], doc[:2])])
    results = []
    for packing in (False, True):
        ranker.encoder.packing = packing
        ranker.zero_grad()
        scores = ranker(batch)
        (scores * torch.tensor([1.0, -2.0, 0.5])).sum().backward()
        results.append((scores.detach(), {name: p.grad.clone() for name, p in ranker.named_parameters()
                                          if p.grad is not None}))
    (padded_scores, padded_grads), (packed_scores, packed_grads) = results
    assert torch.allclose(packed_scores, padded_scores, atol=1e-5)
    assert padded_grads.keys() == packed_grads.keys()
    # every entry within 1e-4 of the largest gradient entry, as for one pass against micro-batches (test_loop)
    largest = max(float(grad.abs().max()) for grad in padded_grads.values())
    worst = max(float((packed_grads[name] - grad).abs().max()) for name, grad in padded_grads.items()) / largest
    print(f"{name}: scores within {float((packed_scores - padded_scores).abs().max()):.1e}, gradients within "
          f"{worst:.1e} of the largest entry")
    assert worst <= 1e-4


def test_packing_is_chosen_by_device_and_backbone(tiny_backbones):
    backbone = load_backbone(tiny_backbones)
    packable = backbone.config.model_type in ("bert", "electra")  # RoBERTa counts positions from its pad token
    assert supports_packing(backbone) == packable
    assert use_packing(True, backbone, torch.device("cpu")) == packable
    assert not use_packing("auto", backbone, torch.device("cpu"))
    assert use_packing("auto", backbone, torch.device("cuda")) == packable
    assert not use_packing(False, backbone, torch.device("cuda"))
    with pytest.raises(ValueError, match="packing 'on' is not one of auto, true, false"):
        use_packing("on", backbone, torch.device("cpu"))
