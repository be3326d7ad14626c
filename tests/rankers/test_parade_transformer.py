import json
import shutil

import pytest
import torch

from posbias.errors import InputError
from posbias.rankers.checkpoint import load_checkpoint, save_checkpoint
from posbias.rankers.late_interaction import LateBatch, LateChunker
from posbias.rankers.geometry import ChunkGeometry
from posbias.rankers.registry import build_ranker


def geometry(backbone, **overrides):
    return {**dict(backbone=backbone, max_query_tokens=6, chunk_tokens=8, stride=6, max_doc_tokens=24), **overrides}


def ids(tokenizer, text):
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def scores(ranker, tokenizer, docs=("the capital of zorvia is mendal", "filler words here " * 6)):
    query = ids(tokenizer, "capital of zorvia")
    with torch.no_grad():
        return ranker(ranker.featurizer(tokenizer).batch([(query, ids(tokenizer, doc)) for doc in docs]))


def test_rand_has_two_layers_and_four_heads_by_default_and_c_s_from_the_backbone(tiny_backbone, tokenizer):
    ranker = build_ranker("parade_transf_rand", geometry(tiny_backbone))
    config = ranker.head.aggregator.model.config
    assert (config.num_hidden_layers, config.num_attention_heads, config.hidden_size) == (2, 4, 32)
    assert ranker.args["aggregator_layers"] == 2 and ranker.args["aggregator_heads"] == 4
    words = ranker.encoder.backbone.get_input_embeddings().weight
    assert torch.equal(ranker.head.aggregator.cls, words[tokenizer.cls_token_id])
    assert torch.equal(ranker.head.aggregator.sep, words[tokenizer.sep_token_id])
    # everything outside the backbone is new: it all trains at the head's rate
    groups = ranker.parameter_groups()
    assert "aggregator" not in groups or not groups["aggregator"]
    with pytest.raises(InputError, match=r"aggregator_heads \(3\) must divide the backbone's hidden size \(32\)"):
        build_ranker("parade_transf_rand", geometry(tiny_backbone, aggregator_heads=3))


def test_rand_on_electra_starts_c_s_from_the_projected_word_embeddings(tiny_backbones, tokenizer):
    ranker = build_ranker("parade_transf_rand", geometry(tiny_backbones))
    backbone = ranker.encoder.backbone
    words = backbone.get_input_embeddings().weight[[tokenizer.cls_token_id, tokenizer.sep_token_id]]
    if hasattr(backbone, "embeddings_project"):  # ELECTRA: 16-wide word embeddings, 32-wide hidden states
        words = backbone.embeddings_project(words)
    assert torch.allclose(ranker.head.aggregator.cls, words[0]) and torch.allclose(ranker.head.aggregator.sep, words[1])


def test_pretr_aggregator_parameters_form_the_aggregator_group(tiny_backbone):
    ranker = build_ranker("parade_transf_pretr", geometry(tiny_backbone, aggregator=tiny_backbone))
    groups = {name: {id(p) for p in params} for name, params in ranker.parameter_groups().items()}
    aggregator = ranker.head.aggregator
    assert groups["aggregator"] == {id(p) for p in aggregator.model.parameters()}
    assert groups["head"] == {id(aggregator.cls), id(aggregator.sep), *(id(p) for p in ranker.head.score.parameters())}
    assert groups["backbone"] == {id(p) for p in ranker.encoder.backbone.parameters()}
    # the never-read word table: one frozen row, not a trainable 30K-row table
    table = aggregator.model.get_input_embeddings().weight
    assert table.shape == (1, 32) and not table.requires_grad


def test_pretr_trains_its_aggregator_at_aggregator_lr(tiny_backbone):
    from posbias.training.loop import parameter_groups
    from posbias.training.recipe import TrainingSettings

    ranker = build_ranker("parade_transf_pretr", geometry(tiny_backbone, aggregator=tiny_backbone))
    settings = TrainingSettings(lr=1e-5, head_lr=1e-4, aggregator_lr=3e-5, epochs=1, batch_size=2, grad_accum=1,
                                margin=1.0, warmup_fraction=0.0, weight_decay=0.0, freeze_embeddings=False,
                                device="cpu", precision="fp32", max_grad_norm=None)
    rates = {group["name"]: group["lr"] for group in parameter_groups(ranker, settings)}
    assert rates == {"backbone": 1e-5, "head": 1e-4, "aggregator": 3e-5}


def test_a_pretr_checkpoint_loads_with_its_aggregator_gone_from_where_it_came(tiny_backbone, tokenizer, tmp_path,
                                                                             monkeypatch):
    aggregator = tmp_path / "aggregator"
    shutil.copytree(tiny_backbone, aggregator)
    torch.manual_seed(0)
    ranker = build_ranker("parade_transf_pretr", geometry(tiny_backbone, aggregator=str(aggregator))).eval()
    with torch.no_grad():
        ranker.head.aggregator.model.encoder.layer[0].output.dense.weight.mul_(1.5)  # as training would move it
    expected = scores(ranker, tokenizer)
    save_checkpoint(ranker, tokenizer, str(tmp_path / "ckpt"))
    shutil.rmtree(aggregator)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    loaded, _ = load_checkpoint(str(tmp_path / "ckpt"))
    assert loaded.args["aggregator"] == str(tmp_path / "ckpt" / "auxiliary" / "aggregator")
    assert json.loads((tmp_path / "ckpt" / "auxiliary" / "aggregator" / "config.json").read_text())["vocab_size"] == 1
    assert torch.equal(scores(loaded, tokenizer), expected)


def test_an_aggregator_too_short_for_the_chunks_is_refused(tiny_backbone):
    # 1 + ceil((200 - 8) / 1) = 193 chunks + 3 specials > the tiny backbone's 128 positions
    with pytest.raises(InputError, match=r"parade_transf_pretr: the aggregator's input of 193 chunks needs 196 "
                                         r"positions, but the model has 128"):
        build_ranker("parade_transf_pretr", geometry(tiny_backbone, aggregator=tiny_backbone, stride=1,
                                                     max_doc_tokens=200))


def lateir(backbone, **overrides):
    return build_ranker("parade_transf_pretr_lateir",
                        geometry(backbone, aggregator=backbone, interaction_model=backbone, **overrides))


def test_late_chunker_encodes_query_and_windows_apart(tokenizer):
    chunker = LateChunker(tokenizer, ChunkGeometry(max_query_tokens=4, chunk_tokens=3, stride=2, max_doc_tokens=8,
                                                   pad_query=True))
    doc = list(range(2000, 2006))
    batch = chunker.batch([([1101, 1102], doc), ([1201, 1202, 1203, 1204, 1205], doc[:2])])
    cls, sep, pad = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
    assert batch.query_ids.tolist() == [[cls, 1101, 1102, pad, pad, sep], [cls, 1201, 1202, 1203, 1204, sep]]
    assert batch.query_attention.tolist() == [[1, 1, 1, 0, 0, 1], [1] * 6]
    assert batch.query_mask.tolist() == [[True, True, False, False], [True] * 4]
    assert batch.query_kept.tolist() == [[True] * 4, [True] * 4]  # pad_query: the padded slots keep positions
    # windows (0, 3), (2, 5), (4, 6): [CLS] window [SEP], the window's tokens and [SEP] of type 1
    assert batch.window_ids[0].tolist() == [[cls, 2000, 2001, 2002, sep], [cls, 2002, 2003, 2004, sep],
                                            [cls, 2004, 2005, sep, pad]]
    assert batch.window_types[0, 2].tolist() == [0, 1, 1, 1, 0]
    assert batch.window_mask[0, 2].tolist() == [True, True, False]
    assert batch.chunk_mask.tolist() == [[True] * 3, [True, False, False]]
    assert batch.window_ids[1, 0].tolist() == [cls, 2000, 2001, sep, pad]
    assert isinstance(batch.to("cpu"), LateBatch)


def test_lateir_backbone_never_sees_query_and_document_together(tiny_backbone, tokenizer):
    torch.manual_seed(0)
    ranker = lateir(tiny_backbone).eval()
    query, other_query = ids(tokenizer, "capital of zorvia"), ids(tokenizer, "founder of brel")
    doc, other_doc = ids(tokenizer, "mendal lies in the hills " * 3), ids(tokenizer, "rivers flow to the sea " * 3)
    sequences = []
    hook = ranker.encoder.backbone.register_forward_pre_hook(
        lambda module, args, kwargs: sequences.extend(kwargs["input_ids"].tolist()), with_kwargs=True)
    featurizer = ranker.featurizer(tokenizer)
    with torch.no_grad():
        features = ranker.encoder(featurizer.batch([(query, doc), (query, other_doc), (other_query, doc)]))
    hook.remove()
    specials = {tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id}
    query_words, doc_words = set(query + other_query) - specials, set(doc + other_doc) - specials
    assert query_words.isdisjoint(doc_words)
    for sequence in sequences:  # each backbone input holds query tokens or document tokens, never both
        assert not (set(sequence) & query_words and set(sequence) & doc_words)
    # so a query's token states do not depend on the document, nor a window's on the query
    assert torch.allclose(features.query_states[0], features.query_states[1], atol=1e-6)
    assert torch.allclose(features.window_states[0], features.window_states[2], atol=1e-6)
    assert not torch.allclose(features.window_states[0], features.window_states[1], atol=1e-3)


def test_lateir_groups_and_checkpoints_both_pretrained_transformers(tiny_backbone, tokenizer, tmp_path):
    ranker = lateir(tiny_backbone).eval()
    head = ranker.head
    assert set(ranker.auxiliary_models()) == {"aggregator", "interaction_model"}
    groups = {name: {id(p) for p in params} for name, params in ranker.parameter_groups().items()}
    assert groups["aggregator"] == {id(p) for model in (head.aggregator.model, head.interaction.model)
                                    for p in model.parameters()}
    save_checkpoint(ranker, tokenizer, str(tmp_path / "ckpt"))
    assert {p.name for p in (tmp_path / "ckpt" / "auxiliary").iterdir()} == {"aggregator", "interaction_model"}
    loaded, _ = load_checkpoint(str(tmp_path / "ckpt"))
    assert torch.equal(scores(loaded, tokenizer), scores(ranker, tokenizer))


def test_lateir_refuses_pooling_it_would_not_use(tiny_backbone):
    with pytest.raises(InputError, match="reads token states, not pooled chunk vectors: pooling 'mean'"):
        lateir(tiny_backbone, pooling="mean")


QUERIES = {"q1": "capital of zorvia", "q2": "founder of brel"}
DOCS = {"pos1": "the capital of zorvia is mendal by the sea", "neg1": "zorvia has green hills and quiet rivers",
        "pos2": "brel was founded by anna in the old days", "neg2": "brel is a town " * 4}


def test_lateir_trains_and_reranks_through_the_unchanged_loops(tiny_backbone, tokenizer, token_store):
    from posbias.scoring.ranker import RankerScorer
    from posbias.scoring.reranking import rerank
    from posbias.training.loop import TrainingSettings, train
    from posbias.training.sampler import candidate_numbers

    store = token_store(DOCS)
    qrels = {"q1": {"pos1": 1}, "q2": {"pos2": 1}}
    candidates = {"q1": ["pos1", "neg1", "neg2"], "q2": ["pos2", "neg2", "neg1"]}
    numbers = candidate_numbers(((q, d) for q, docs in candidates.items() for d in docs), store, set(qrels), "test")
    torch.manual_seed(0)
    ranker = lateir(tiny_backbone, pad_query=True)
    settings = TrainingSettings(lr=1e-3, head_lr=1e-2, epochs=1, batch_size=2, grad_accum=1, margin=1.0,
                                warmup_fraction=0.0, weight_decay=0.0, freeze_embeddings=False, device="cpu",
                                precision="fp32", max_grad_norm=1.0)
    summary = train(ranker, tokenizer, QUERIES, store, qrels, numbers, settings, seed=0, progress=False)
    assert summary["steps"] == 1 and all(torch.isfinite(torch.tensor(summary["losses"])))
    pool = {q: {d: 0.0 for d in docs} for q, docs in candidates.items()}
    run, info = rerank(RankerScorer(ranker, tokenizer, batch_size=2, device="cpu", progress=False), QUERIES, store,
                       pool)
    assert info["pairs"] == 6 and {q: set(s) for q, s in run.items()} == {q: set(d) for q, d in candidates.items()}
    one_by_one = RankerScorer(ranker, tokenizer, batch_size=1, device="cpu", progress=False)
    alone, _ = rerank(one_by_one, QUERIES, store, {"q2": {"neg2": 0.0}})
    assert alone["q2"]["neg2"] == pytest.approx(run["q2"]["neg2"], abs=1e-5)
