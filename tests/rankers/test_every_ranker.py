"""Every registered ranker, on tiny random BERT, ELECTRA and RoBERTa-shaped backbones: it builds, trains
two optimizer steps with a finite loss that move the parameters of every trainable module, scores
deterministically, scores a document the same alone and in a batch, ignores padding appended to its
input, and scores exactly the same after a round trip through a checkpoint.

Rankers over greedy disjoint chunks (`catalog.DISJOINT_CHUNKS`) get stride == chunk_tokens, those reading one
sequence (`catalog.ONE_SEQUENCE`) the whole document at once, the others overlapping windows. A ranker that needs arguments beyond the chunk geometry (a pretrained aggregator, ...) gets them from
`EXTRA_ARGS`; a new ranker is covered as soon as it is registered.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from posbias.rankers.bi_encoder import BiEncoderBatch
from posbias.rankers.catalog import DISJOINT_CHUNKS, ONE_SEQUENCE
from posbias.rankers.checkpoint import load_checkpoint, save_checkpoint
from posbias.rankers.late_interaction import LateBatch
from posbias.rankers.registry import RANKERS, build_ranker
from posbias.training.loop import parameter_groups
from posbias.training.loss import pairwise_margin_loss
from posbias.training.recipe import TrainingSettings

pytestmark = pytest.mark.slow  # minutes: `make test` starts this file first (tests/conftest.py)

# Arguments a ranker needs beyond the geometry, given the tiny backbone's directory (which also serves as the
# "pretrained" aggregator and interaction model).
EXTRA_ARGS = {
    "parade_transf_pretr": lambda path: {"aggregator": path},
    "parade_transf_pretr_lateir": lambda path: {"aggregator": path, "interaction_model": path},
}


def ranker_args(name: str, backbone: str) -> dict:
    one_chunk = name == "firstp"
    if name in ONE_SEQUENCE:
        geometry = dict(max_query_tokens=6, chunk_tokens=24, stride=24, max_doc_tokens=24)
    else:
        geometry = dict(max_query_tokens=6, chunk_tokens=8, stride=8 if one_chunk or name in DISJOINT_CHUNKS else 6,
                        max_doc_tokens=8 if one_chunk else 24)
    extra = EXTRA_ARGS.get(name, lambda path: {})(backbone)
    return {"backbone": backbone, **geometry, **extra}


def texts(tokenizer):
    ids = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    query = ids("capital of zorvia")
    docs = [ids("the capital of zorvia is mendal"), ids(" ".join(["filler words here"] * 12)),
            ids("zorvia " * 3 + "mendal is a capital city with many words in it")]
    return query, docs


def pad(batch, extra_length: int, extra_chunks: int, pad_id: int):
    """The same pairs with `extra_length` pad tokens after every chunk (and query) and `extra_chunks`
    padding-only chunks."""
    if isinstance(batch, LateBatch):
        return pad_late(batch, extra_length, extra_chunks, pad_id)
    if isinstance(batch, BiEncoderBatch):  # query and document inputs are one chunk each
        return BiEncoderBatch(pad(batch.queries, extra_length, 0, pad_id), pad(batch.documents, extra_length, 0, pad_id))
    n, chunks, length = batch.input_ids.shape
    grow = lambda t, value: torch.nn.functional.pad(t, (0, extra_length, 0, extra_chunks), value=value)  # noqa: E731
    positions = batch.doc_positions // length * (length + extra_length) + batch.doc_positions % length
    return dataclasses.replace(
        batch, input_ids=grow(batch.input_ids, pad_id), attention_mask=grow(batch.attention_mask, 0),
        token_type_ids=grow(batch.token_type_ids, 0),
        global_attention_mask=None if batch.global_attention_mask is None else grow(batch.global_attention_mask, 0),
        chunk_mask=torch.nn.functional.pad(batch.chunk_mask, (0, extra_chunks), value=False),
        doc_positions=positions)


def pad_late(batch: LateBatch, extra_length: int, extra_chunks: int, pad_id: int) -> LateBatch:
    F = torch.nn.functional  # noqa: N806
    chunked = lambda t, value: F.pad(t, (0, extra_length, 0, extra_chunks), value=value)  # noqa: E731
    longer = lambda t, value: F.pad(t, (0, extra_length), value=value)  # noqa: E731
    return LateBatch(
        query_ids=longer(batch.query_ids, pad_id), query_attention=longer(batch.query_attention, 0),
        query_mask=longer(batch.query_mask, False), query_kept=longer(batch.query_kept, False),
        window_ids=chunked(batch.window_ids, pad_id), window_attention=chunked(batch.window_attention, 0),
        window_types=chunked(batch.window_types, 0), window_mask=chunked(batch.window_mask, False),
        chunk_mask=F.pad(batch.chunk_mask, (0, extra_chunks), value=False))


def settings(**overrides) -> TrainingSettings:
    base = dict(lr=1e-2, head_lr=1e-2, epochs=1, batch_size=2, grad_accum=1, margin=1.0, warmup_fraction=0.0,
                weight_decay=0.0, freeze_embeddings=False, device="cpu", precision="fp32", max_grad_norm=None)
    return TrainingSettings(**{**base, **overrides})


@pytest.fixture(params=sorted(RANKERS))
def ranker_name(request):
    return request.param


def test_trains_scores_ignores_padding_and_round_trips(ranker_name, tiny_backbones, tokenizer, tmp_path):
    torch.manual_seed(0)
    ranker = build_ranker(ranker_name, ranker_args(ranker_name, tiny_backbones))
    featurizer = ranker.featurizer(tokenizer)
    query, docs = texts(tokenizer)

    # two optimizer steps: a finite loss, and every module with trainable parameters moved
    before = {k: v.clone() for k, v in ranker.state_dict().items()}
    optimizer = torch.optim.AdamW(parameter_groups(ranker, settings()))
    ranker.train()
    for _ in range(2):
        scores = ranker(featurizer.batch([(query, docs[0]), (query, docs[1]), (query, docs[2]), (query, docs[1])]))
        loss = pairwise_margin_loss(scores[0::2], scores[1::2], 1.0, "mean")
        assert torch.isfinite(loss)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    trainable_modules = {name for name, module in ranker.named_modules()
                         if any(p.requires_grad for p in module.parameters(recurse=False))}
    moved = {name.rsplit(".", 1)[0] for name, value in ranker.state_dict().items()
             if name in dict(ranker.named_parameters()) and not torch.equal(value, before[name])}
    assert trainable_modules - moved == set(), "modules whose parameters training never changed"

    ranker.eval()
    pairs = [(query, doc) for doc in docs]
    with torch.no_grad():
        batch = featurizer.batch(pairs)
        scores = ranker(batch)
        assert torch.equal(ranker(batch), scores)  # deterministic
        alone = torch.cat([ranker(featurizer.batch([pair])) for pair in pairs])
        assert torch.allclose(alone, scores, atol=1e-5)  # a document alone scores as in a batch
        padded = ranker(pad(batch, extra_length=5, extra_chunks=2, pad_id=tokenizer.pad_token_id))
        assert torch.allclose(padded, scores, atol=1e-5)  # appended padding changes nothing
    save_checkpoint(ranker, tokenizer, str(tmp_path / "ckpt"))
    loaded, _ = load_checkpoint(str(tmp_path / "ckpt"))
    # the same arguments, but every pretrained model now read from the checkpoint's own directories
    paths = {"backbone", "backbone_layers", *EXTRA_ARGS.get(ranker_name, lambda path: {})(tiny_backbones)}
    assert loaded.registry_name == ranker_name
    assert {k: v for k, v in loaded.args.items() if k not in paths} == \
           {k: v for k, v in ranker.args.items() if k not in paths}
    with torch.no_grad():
        assert torch.equal(loaded(loaded.featurizer(tokenizer).batch(pairs)), scores)  # exactly
