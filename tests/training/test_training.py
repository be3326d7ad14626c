import math
import random

import pytest
import torch

from posbias.errors import InputError
from posbias.rankers.registry import build_ranker
from posbias.device import autocast_dtype, pick_device
from posbias.training.freezing import freeze_lower, transformer_layers
from posbias.training.loop import TrainingSettings, seed_everything, train, warmup_then_constant
from posbias.training.loss import pairwise_margin_loss
from posbias.training.sampler import PairSampler, candidate_numbers

QUERIES = {f"q{i}": f"capital of land{i}" for i in range(6)}
DOCS = {**{f"pos{i}": f"the capital of land{i} is city{i} and it lies by the sea" for i in range(6)},
        **{f"neg{i}": f"land{i} has green hills and quiet rivers" for i in range(6)}}
QRELS = {f"q{i}": {f"pos{i}": 1} for i in range(6)}
CANDIDATES = {f"q{i}": {f"pos{i}": 2.0, f"neg{i}": 1.0, f"neg{(i + 1) % 6}": 0.5} for i in range(6)}


def settings(**overrides):
    base = dict(lr=1e-3, head_lr=1e-2, epochs=1, batch_size=2, grad_accum=1, margin=1.0, warmup_fraction=0.2,
                weight_decay=0.0, freeze_embeddings=False, device="cpu", precision="auto", max_grad_norm=1.0)
    return TrainingSettings(**{**base, **overrides})


def test_pairwise_margin_loss_by_hand():
    pos, neg = torch.tensor([2.0, 0.0, 1.0]), torch.tensor([0.5, 0.5, 1.0])
    # max(0, 1 - 1.5) = 0, max(0, 1 + 0.5) = 1.5, max(0, 1 - 0) = 1
    assert pairwise_margin_loss(pos, neg, margin=1.0).item() == pytest.approx((0 + 1.5 + 1) / 3)


def test_warmup_is_linear_then_constant():
    schedule = warmup_then_constant(4)
    assert [schedule(s) for s in range(6)] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]
    assert warmup_then_constant(0)(0) == 1.0


def numbers(store, candidates=CANDIDATES):
    return candidate_numbers(((q, d) for q, docs in candidates.items() for d in docs), store, set(QRELS), "test")


def test_sampler_draws_positive_and_hard_negative_from_candidates(token_store):
    store = token_store(DOCS)
    sampler = PairSampler(QRELS, numbers(store), store)
    triples = sampler.epoch(random.Random(0))
    assert sorted(q for q, _, _ in triples) == sorted(QUERIES)
    for qid, pos, neg in triples:
        pos, neg = store.doc_id(pos), store.doc_id(neg)
        assert QRELS[qid].get(pos) == 1 and neg in CANDIDATES[qid] and neg not in QRELS[qid]


def test_a_candidate_missing_from_the_collection_is_named(token_store):
    store = token_store(DOCS)
    with pytest.raises(ValueError, match=r"1 candidate documents of test are not in the token store .*'ghost'"):
        numbers(store, {**CANDIDATES, "q1": {"ghost": 1.0}})


def test_two_steps_finite_loss_parameters_change_and_seeded_runs_agree(tiny_backbone, tokenizer, token_store):
    store = token_store(DOCS)
    args = dict(backbone=tiny_backbone, max_query_tokens=8, chunk_tokens=8, stride=8, max_doc_tokens=16)

    def run(seed):
        seed_everything(seed)
        ranker = build_ranker("parade_attn", args)
        before = {n: p.detach().clone() for n, p in ranker.named_parameters()}
        summary = train(ranker, tokenizer, QUERIES, store, QRELS, numbers(store),
                        settings(batch_size=3, grad_accum=1), seed=seed, progress=False)
        return ranker, before, summary

    ranker, before, summary = run(7)
    assert summary["steps"] == 2 and len(summary["losses"]) == 2
    assert all(math.isfinite(loss) for loss in summary["losses"])
    # Every weight matrix on the scoring path moved. (BERT's pooler is not on it, and biases that shift
    # all scores alike get no gradient from a pairwise loss.)
    unchanged = [n for n, p in ranker.named_parameters()
                 if torch.equal(before[n], p) and ".pooler." not in n and not n.endswith("bias")]
    assert unchanged == []
    assert any(n.startswith("head.") for n in before) and any(".encoder.layer.1." in n for n in before)
    again, _, summary_again = run(7)
    assert summary_again["losses"] == summary["losses"]
    assert all(torch.equal(a, b) for a, b in zip(ranker.parameters(), again.parameters()))


def test_gradient_checkpointing_trains_to_the_same_weights(tiny_backbone, tokenizer, token_store):
    store = token_store(DOCS)
    args = dict(backbone=tiny_backbone, max_query_tokens=8, chunk_tokens=8, stride=8, max_doc_tokens=16, dropout=0.0)

    def run(**overrides):
        seed_everything(3)
        ranker = build_ranker("maxp", args)
        calls = []
        for layer in ranker.encoder.backbone.encoder.layer:  # count the layers' attention passes
            layer.attention.register_forward_hook(lambda *_: calls.append(1))
        train(ranker, tokenizer, QUERIES, store, QRELS, numbers(store),
              settings(batch_size=3, grad_accum=1, freeze_embeddings=True, **overrides), seed=3, progress=False)
        return ranker, len(calls)

    plain, plain_calls = run()
    recomputed, recomputed_calls = run(gradient_checkpointing=True)
    assert recomputed_calls > plain_calls  # the layers ran again in the backward passes
    assert not recomputed.encoder.backbone.is_activation_checkpointing  # switched off again for reranking
    for (name, a), b in zip(plain.named_parameters(), recomputed.parameters()):
        assert torch.allclose(a, b, atol=1e-6), name


def test_frozen_embeddings_and_layers_stay_put_and_the_rest_trains(tiny_backbone, tokenizer, token_store):
    store = token_store(DOCS)
    seed_everything(1)
    ranker = build_ranker("maxp", dict(backbone=tiny_backbone, max_query_tokens=8, chunk_tokens=8, stride=8,
                                       max_doc_tokens=16))
    before = {n: p.detach().clone() for n, p in ranker.named_parameters()}
    train(ranker, tokenizer, QUERIES, store, QRELS, numbers(store),
          settings(freeze_embeddings=True, freeze_layers=1), 1, progress=False)
    after = dict(ranker.named_parameters())
    frozen = [n for n in before if ".embeddings." in n or ".encoder.layer.0." in n]
    assert frozen and all(torch.equal(before[n], after[n]) for n in frozen)
    assert not torch.equal(before["encoder.backbone.encoder.layer.1.output.dense.weight"],
                           after["encoder.backbone.encoder.layer.1.output.dense.weight"])


def test_freezing_refuses_impossible_settings(tiny_backbone):
    backbone = build_ranker("maxp", dict(backbone=tiny_backbone, max_query_tokens=8, chunk_tokens=8, stride=8,
                                         max_doc_tokens=16)).encoder.backbone
    assert len(transformer_layers(backbone)) == 2
    with pytest.raises(ValueError, match="freeze_layers=2 leaves none"):
        freeze_lower(backbone, embeddings=True, layers=2)
    with pytest.raises(ValueError, match="needs training.freeze_embeddings"):
        freeze_lower(backbone, embeddings=False, layers=1)


def test_device_choice():
    assert pick_device("cpu").type == "cpu"
    assert autocast_dtype(torch.device("cpu"), "auto") is None
    assert autocast_dtype(torch.device("cpu"), "fp32") is None
    assert autocast_dtype(torch.device("cpu"), "bf16") is torch.bfloat16
    with pytest.raises(ValueError, match="needs a CUDA device"):
        autocast_dtype(torch.device("cpu"), "fp16")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="a GPU was requested, but torch sees no GPU"):
            pick_device("cuda")
    with pytest.raises(InputError, match="device 'gpu0' is not a torch device"):
        pick_device("gpu0")


def test_short_epochs_train_on_a_sample_of_the_queries(tiny_backbone, tokenizer, token_store):
    store = token_store(DOCS)
    args = dict(backbone=tiny_backbone, max_query_tokens=8, chunk_tokens=8, stride=8, max_doc_tokens=16)
    seed_everything(3)
    summary = train(build_ranker("maxp", args), tokenizer, QUERIES, store, QRELS, numbers(store),
                    settings(epochs=3, batch_size=1, queries_per_epoch=2), seed=3, progress=False)
    assert summary["steps"] == 3 * 2 and len(summary["losses"]) == 6  # 2 of the 6 queries per epoch
