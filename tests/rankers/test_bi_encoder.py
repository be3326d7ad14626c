"""The bi-encoder (the study's E5-4K rows): query and document encoded apart, mean-pooled over real tokens,
scored by their cosine; E5's prefixes on request, and e5-base-4k's position ids for short inputs. Each score is
checked against the backbone run by hand on the tokenizer's own encoding of each text."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from posbias.errors import InputError
from posbias.rankers.bi_encoder import SHORT_INPUT
from posbias.rankers.registry import build_ranker

QUERY = "capital of zorvia"
DOCS = ["the capital of zorvia is mendal", "filler words here " * 5, "zorvia"]


def args(backbone, doc_tokens=32, **extra) -> dict:
    return dict(backbone=backbone, max_query_tokens=8, chunk_tokens=doc_tokens, stride=doc_tokens,
                max_doc_tokens=doc_tokens, **extra)


def by_hand(backbone, tokenizer, query: str, doc: str, position_ids=None) -> float:
    """The cosine of the masked mean of the backbone's last states of each text, alone, as E5's card computes it."""
    @torch.no_grad()
    def embed(text):
        inputs = tokenizer(text, return_tensors="pt")
        extra = {} if position_ids is None else {"position_ids": position_ids(inputs["input_ids"].shape[1])}
        states = backbone(**inputs, **extra).last_hidden_state
        mask = inputs["attention_mask"].unsqueeze(-1).float()
        return F.normalize((states * mask).sum(1) / mask.sum(1), dim=-1)

    return float((embed(query) * embed(doc)).sum())


def scores(ranker, tokenizer, query: str, docs: list[str]) -> list[float]:
    featurizer = ranker.featurizer(tokenizer)
    query_ids = featurizer.tokenize_queries([query])[0]
    ids = [tokenizer(doc, add_special_tokens=False)["input_ids"] for doc in docs]
    with torch.no_grad():
        return ranker(featurizer.batch([(query_ids, doc) for doc in ids])).tolist()


def test_scores_are_the_cosine_of_the_separately_pooled_texts(tiny_backbone, tokenizer):
    ranker = build_ranker("biencoder", args(tiny_backbone)).eval()
    assert ranker.args["pooling"] == "mean" and ranker.args["prefixes"] == "none"
    expected = [by_hand(ranker.encoder.backbone, tokenizer, QUERY, doc) for doc in DOCS]
    assert scores(ranker, tokenizer, QUERY, DOCS) == pytest.approx(expected, abs=1e-5)


def test_e5_prefixes_come_before_each_text(tiny_backbone, tokenizer):
    ranker = build_ranker("biencoder", args(tiny_backbone, prefixes="e5")).eval()
    expected = [by_hand(ranker.encoder.backbone, tokenizer, f"query: {QUERY}", f"passage: {doc}") for doc in DOCS]
    assert scores(ranker, tokenizer, QUERY, DOCS) == pytest.approx(expected, abs=1e-5)
    plain = build_ranker("biencoder", args(tiny_backbone)).eval()
    assert scores(plain, tokenizer, QUERY, DOCS) != pytest.approx(expected, abs=1e-5)


@pytest.fixture(scope="module")
def tiny_4k(tmp_path_factory, tokenizer) -> str:
    """A tiny BERT with e5-base-4k's 4096 positions."""
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                                 num_attention_heads=2, intermediate_size=64, max_position_embeddings=4096))
    path = tmp_path_factory.mktemp("tiny-4k")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def test_short_inputs_get_e5_4ks_stretched_positions_and_long_ones_plain_positions(tiny_4k, tokenizer):
    ranker = build_ranker("biencoder", args(tiny_4k, doc_tokens=1000, position_ids="stretched_short")).eval()
    backbone = ranker.encoder.backbone
    stretched = lambda n: torch.arange(n)[None] * (4096 // SHORT_INPUT) if n <= SHORT_INPUT else None  # noqa: E731
    long_doc = "capital " * 700  # 700 tokens + 2 special tokens: beyond 512, so plain positions
    short, long = DOCS[0], long_doc

    def query_and(doc):  # the query is short (stretched) whatever the document's length
        def embed(text):
            inputs = tokenizer(text, return_tensors="pt")
            n = inputs["input_ids"].shape[1]
            extra = {"position_ids": stretched(n)} if n <= SHORT_INPUT else {}
            states = backbone(**inputs, **extra).last_hidden_state
            return F.normalize(states.mean(1), dim=-1)
        return float((embed(QUERY) * embed(doc)).sum())

    with torch.no_grad():
        expected = [query_and(short), query_and(long)]
    together = scores(ranker, tokenizer, QUERY, [short, long])  # one batch: never one group, never one rule
    assert together == pytest.approx(expected, abs=1e-5)
    plain = build_ranker("biencoder", args(tiny_4k, doc_tokens=1000)).eval()
    assert scores(plain, tokenizer, QUERY, [short])[0] != pytest.approx(expected[0], abs=1e-5)


@pytest.mark.parametrize("extra,message", [
    ({"pooling": "cls"}, "pools by the mean"),
    ({"chunk_tokens": 8, "stride": 8}, "reads the document in one sequence"),
    ({"pad_query": True}, "pad_query has no meaning"),
    ({"prefixes": "query"}, "prefixes 'query' is not one of"),
])
def test_other_layouts_are_refused(tiny_backbone, extra, message):
    with pytest.raises(InputError, match=message):
        build_ranker("biencoder", {**args(tiny_backbone), **extra})
