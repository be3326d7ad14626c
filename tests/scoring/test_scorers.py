"""Scorers of probe pairs: a dense encoder (raw dot or cosine, separate query and document models), Lucene BM25 over
each probe's own documents, and a trained checkpoint as a cross-encoder."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from posbias.errors import InputError
from posbias.scoring.ranker import RankerScorer
from posbias.scoring.scorers import BM25Scorer, DenseScorer, build_scorer

QUERY = "Where was Olga Nukral born ?"
EVIDENCE = "Olga Nukral was born in Tarvon ."
OTHERS = ["The river runs north .", "The harbour opened in spring .", "A market fills the square on Sundays ."]


def test_the_dot_score_is_the_inner_product_of_the_raw_vectors(tiny_backbone):
    from posbias.retrieval.dense import DenseEncoder

    scorer = DenseScorer(tiny_backbone, pooling="mean", score="dot", max_tokens=64, device="cpu")
    items = [(QUERY, EVIDENCE), (QUERY, " ".join(OTHERS))]
    raw = DenseEncoder(tiny_backbone, pooling="mean", max_query_tokens=64, max_passage_tokens=64, device="cpu",
                       normalize=False)
    expected = (raw.encode_queries([QUERY]) @ raw.encode_passages([d for _, d in items], progress=False).T)[0]
    np.testing.assert_allclose(scorer.score(items), expected, rtol=1e-5)
    assert np.linalg.norm(raw.encode_queries([QUERY])) != pytest.approx(1.0)  # not unit vectors: dot is not cosine


def test_cosine_is_the_dot_of_unit_vectors_and_repeated_texts_score_alike(tiny_backbone):
    dot = DenseScorer(tiny_backbone, pooling="cls", score="dot", max_tokens=64, device="cpu")
    cosine = DenseScorer(tiny_backbone, pooling="cls", score="cosine", max_tokens=64, device="cpu")
    items = [(QUERY, EVIDENCE), (QUERY, OTHERS[0]), (QUERY, EVIDENCE)]
    scores = cosine.score(items)
    assert np.all(np.abs(scores) <= 1 + 1e-6) and scores[0] == scores[2]
    query = dot.query_encoder.encode_queries([QUERY])[0]
    documents = dot.doc_encoder.encode_passages([EVIDENCE, OTHERS[0]], progress=False)
    expected = documents @ query / (np.linalg.norm(documents, axis=1) * np.linalg.norm(query))
    np.testing.assert_allclose(scores[:2], expected, rtol=1e-5)


def test_a_separate_document_model_encodes_the_documents(tiny_backbone, tmp_path):
    from transformers import AutoModel

    shutil.copytree(tiny_backbone, tmp_path / "doc")  # the tokenizer too
    other = AutoModel.from_pretrained(tiny_backbone)
    torch.manual_seed(1)
    with torch.no_grad():
        for parameter in other.parameters():
            parameter.add_(torch.randn_like(parameter))  # another document encoder
    other.save_pretrained(tmp_path / "doc")
    shared = DenseScorer(tiny_backbone, pooling="mean", max_tokens=64, device="cpu")
    split = DenseScorer(tiny_backbone, doc_model=str(tmp_path / "doc"), pooling="mean", max_tokens=64, device="cpu")
    assert shared.doc_encoder is shared.query_encoder and split.doc_encoder is not split.query_encoder
    query = split.query_encoder.encode_queries([QUERY])[0]
    document = split.doc_encoder.encode_passages([EVIDENCE], progress=False)[0]
    assert split.score([(QUERY, EVIDENCE)])[0] == pytest.approx(float(query @ document), rel=1e-5)
    assert split.score([(QUERY, EVIDENCE)])[0] != pytest.approx(shared.score([(QUERY, EVIDENCE)])[0])


def test_documents_longer_than_max_tokens_are_flagged(tiny_backbone):
    scorer = DenseScorer(tiny_backbone, pooling="mean", max_tokens=16, device="cpu")
    assert scorer.truncated([EVIDENCE, " ".join(OTHERS * 3)]).tolist() == [False, True]


def test_an_unknown_score_is_refused(tiny_backbone):
    with pytest.raises(InputError, match="score must be one of"):
        DenseScorer(tiny_backbone, score="l2")


@pytest.fixture(scope="module")
def bm25_scores():
    first, last = " ".join([EVIDENCE, *OTHERS]), " ".join([*OTHERS, EVIDENCE])
    items = [(QUERY, first), (QUERY, last), (QUERY, EVIDENCE), (QUERY, " ".join(OTHERS)),
             (QUERY, " ".join([EVIDENCE, "Olga Nukral", *OTHERS]))]
    return BM25Scorer(k1=0.9, b=0.4).score(items)


def test_bm25_ignores_order_and_scores_a_document_without_query_terms_zero(bm25_scores):
    first, last, _, no_terms, _ = bm25_scores
    assert first == last > 0 and no_terms == 0.0


def test_bm25_rewards_brevity_and_repeating_the_head(bm25_scores):
    first, _, evidence_alone, _, repeated = bm25_scores
    assert evidence_alone > first  # same matches, shorter document
    assert repeated > first  # more occurrences of the head's name


def test_a_checkpoint_scores_what_its_geometry_reads(tiny_backbone, tokenizer, tmp_path):
    from posbias.rankers.checkpoint import save_checkpoint
    from posbias.rankers.registry import build_ranker

    torch.manual_seed(0)
    ranker = build_ranker("firstp", {"backbone": tiny_backbone, "max_query_tokens": 8, "chunk_tokens": 12,
                                     "stride": 12, "max_doc_tokens": 12})
    save_checkpoint(ranker, tokenizer, str(tmp_path / "ckpt"))
    scorer = RankerScorer.from_checkpoint(str(tmp_path / "ckpt"), batch_size=2, device="cpu")
    tail = " ".join(OTHERS * 2)
    early, late = " ".join([EVIDENCE, tail]), " ".join([EVIDENCE, OTHERS[0], tail])
    # both documents start with the same 12 tokens, so FirstP cannot tell them apart
    scores = scorer.score([(QUERY, early), (QUERY, late), (QUERY, OTHERS[1])])
    assert scores[0] == pytest.approx(scores[1], abs=1e-6) and scores[0] != pytest.approx(scores[2])
    assert scorer.truncated([EVIDENCE, early]).tolist() == [False, True]
    # a batch's scores do not depend on the other pairs in it
    assert scorer.score([(QUERY, OTHERS[1])])[0] == pytest.approx(scores[2], abs=1e-5)
    # the probes' checkpoint scorer keeps the eager linear layers (the study's reranking may take oneDNN's)
    probe_scorer = build_scorer({"kind": "checkpoint", "model": "firstp", "device": "cpu"}, str(tmp_path / "ckpt"))
    assert not probe_scorer.fused
    assert probe_scorer.score([(QUERY, OTHERS[1])])[0] == pytest.approx(scores[2], abs=1e-5)


def test_build_scorer_refuses_an_unknown_kind_and_a_checkpoint_without_a_directory():
    with pytest.raises(InputError, match="kind must be one of"):
        build_scorer({"kind": "splade"})
    with pytest.raises(InputError, match="needs the checkpoint directory"):
        build_scorer({"kind": "checkpoint", "model": "firstp"})
    assert isinstance(build_scorer({"kind": "bm25", "label": "BM25", "k1": 1.2, "b": 0.75}), BM25Scorer)


def test_probe_encoders_score_in_fp32_unless_asked(tiny_backbone, monkeypatch):
    """The authors scored in fp32; fp16 autocast on CUDA is a choice (`probes.scorers.<name>.precision`), never
    the default, even on a GPU (where an index's encoder uses fp16 by default)."""
    import posbias.retrieval.dense as dense

    monkeypatch.setattr(dense, "pick_device", lambda device: torch.device("cuda"))
    monkeypatch.setattr(torch.nn.Module, "to", lambda self, *args, **kwargs: self)  # no GPU here: stay put
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: True)
    assert DenseScorer(tiny_backbone, max_tokens=64).query_encoder.autocast_dtype is None
    assert DenseScorer(tiny_backbone, max_tokens=64, precision="fp16").query_encoder.autocast_dtype == torch.float16
    assert dense.DenseEncoder(tiny_backbone, max_query_tokens=64, max_passage_tokens=64).autocast_dtype == torch.float16


def test_a_checkpoint_scorer_scores_in_fp32_unless_asked(tiny_backbone, tokenizer, tmp_path, monkeypatch):
    """Every probe scorer, a trained checkpoint too, defaults to fp32 (config/paper/probes.yaml's
    encoder_precision), also on a GPU where `precision: auto` would take bf16 autocast; in full fp32 (no TF32) and
    with the eager linear layers, as the probes always scored (the study's reranking takes both speed-ups)."""
    import posbias.scoring.ranker
    from posbias.rankers.checkpoint import save_checkpoint
    from posbias.rankers.registry import build_ranker

    save_checkpoint(build_ranker("firstp", {"backbone": tiny_backbone, "max_query_tokens": 8, "chunk_tokens": 12,
                                            "stride": 12, "max_doc_tokens": 12}), tokenizer, str(tmp_path / "ckpt"))
    monkeypatch.setattr(posbias.scoring.ranker, "pick_device", lambda device: torch.device("cuda"))
    monkeypatch.setattr(torch.nn.Module, "to", lambda self, *args, **kwargs: self)  # no GPU here: stay put
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: True)
    checkpoint = {"kind": "checkpoint", "model": "firstp"}
    scorer = build_scorer(checkpoint, str(tmp_path / "ckpt"))
    assert scorer.dtype is None and scorer.matmuls == "ieee" and not scorer.fused
    assert not torch.backends.cuda.matmul.allow_tf32
    assert build_scorer({**checkpoint, "precision": "auto"}, str(tmp_path / "ckpt")).dtype == torch.bfloat16
    from posbias.config import load_config

    cfg = load_config(Path(__file__).resolve().parents[2] / "config.yaml",
                      overrides={"probes": {"scorers": {"x": {"kind": "checkpoint", "model": "firstp"}}}})
    assert cfg.data["probes"]["scorers"]["x"]["precision"] == "fp32"


def test_the_probe_precision_is_validated():
    from posbias.config import ConfigError, load_config

    with pytest.raises(ConfigError, match="precision"):
        load_config(Path(__file__).resolve().parents[2] / "config.yaml", overrides={"probes": {"scorers": {"x": {"kind": "dense", "query_model": "m",
                                                                          "precision": "fp8"}}}})
