"""Outside cross-encoders: tiny random sequence-classification models of BERT, ELECTRA and RoBERTa shape score
with their own head (equal to a forward pass run by hand), window by window (equal to scoring each window alone),
and a model without a classification head or a missing directory is one clear error."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from posbias.errors import InputError
from posbias.scoring.cross_encoder import CrossEncoder

QUERY = "capital of zorvia"
DOCUMENT = " ".join(f"word{i} the capital of zorvia is mendal" if i == 5 else f"filler{i} green hills" for i in range(12))


def classifier(backbone: str, path, num_labels: int = 1) -> str:
    torch.manual_seed(1)
    model = AutoModelForSequenceClassification.from_pretrained(backbone, num_labels=num_labels)
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(backbone).save_pretrained(path)
    return str(path)


def by_hand(path: str, query: str, document: str, max_length: int) -> torch.Tensor:
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    inputs = tokenizer(query, document, truncation="only_second", max_length=max_length, return_tensors="pt")
    if model.config.type_vocab_size < 2:  # RoBERTa's single segment (the tiny one borrows BERT's tokenizer)
        del inputs["token_type_ids"]
    with torch.no_grad():
        return model(**inputs).logits[0]


def test_scores_are_the_model_s_own_head_on_the_truncated_pair(tiny_backbones, tmp_path):
    path = classifier(tiny_backbones, tmp_path / "ce")
    encoder = CrossEncoder(path, device="cpu", max_length=24)
    scores = encoder.score([(QUERY, DOCUMENT), (QUERY, "green hills")])
    assert scores[0] == pytest.approx(by_hand(path, QUERY, DOCUMENT, 24)[0].item(), abs=1e-6)
    assert scores[1] == pytest.approx(by_hand(path, QUERY, "green hills", 24)[0].item(), abs=1e-6)
    assert scores[0] != scores[1]


def test_a_two_label_head_scores_relevant_minus_not(tiny_backbone, tmp_path):
    path = classifier(tiny_backbone, tmp_path / "ce2", num_labels=2)
    logits = by_hand(path, QUERY, DOCUMENT, 24)
    score = CrossEncoder(path, device="cpu", max_length=24).score([(QUERY, DOCUMENT)])[0]
    assert score == pytest.approx((logits[1] - logits[0]).item(), abs=1e-6)


def test_window_aggregation_equals_scoring_each_window_alone(tiny_backbone, tmp_path):
    path = classifier(tiny_backbone, tmp_path / "ce")
    encoder = CrossEncoder(path, device="cpu", max_length=64, batch_size=3)
    windows = encoder.windows(DOCUMENT, window=10, stride=8)
    tokens = encoder.tokenizer(DOCUMENT, add_special_tokens=False)["input_ids"]
    assert len(windows) == 1 + -(-(len(tokens) - 10) // 8)  # every token read, the last window at the end
    assert encoder.tokenizer(windows[0], add_special_tokens=False)["input_ids"] == tokens[:10]
    assert DOCUMENT.endswith(windows[-1])
    alone = [by_hand(path, QUERY, w, 64)[0].item() for w in windows]
    maxp, firstp = (encoder.score_windows([(QUERY, DOCUMENT), (QUERY, "green hills")], 10, 8, aggregate)
                    for aggregate in ("max", "first"))
    assert maxp[0] == pytest.approx(max(alone), abs=1e-6) and firstp[0] == pytest.approx(alone[0], abs=1e-6)
    assert maxp[1] == pytest.approx(firstp[1], abs=1e-6)  # one window: both views agree


def test_a_model_without_a_classification_head_and_a_missing_directory_are_named(tiny_backbone, tmp_path):
    with pytest.raises(InputError, match=r"has no sequence-classification head \(its architectures: BertModel\)"):
        CrossEncoder(tiny_backbone, device="cpu")
    with pytest.raises(InputError, match=r"cannot load the cross-encoder '.*nowhere': no such directory"):
        CrossEncoder(str(tmp_path / "nowhere"), device="cpu")
    with pytest.raises(InputError, match="aggregate 'mean' is not one of max, first"):
        CrossEncoder(classifier(tiny_backbone, tmp_path / "ce"), device="cpu").score_windows([], 8, 8, "mean")
