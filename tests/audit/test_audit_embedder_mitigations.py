"""The bi-encoders' mitigations (`posbias.audit.mitigations`: attention_calibration, position_balanced_finetuning):
what each changes, its audit beside its base's on the mitigation table, and mistakes in one line."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from posbias.audit.battery_settings import settings_with
from posbias.audit.jobs import AuditJob
from posbias.audit.mitigations import apply, checked, parse_mitigation
from posbias.audit.spec import parse_model_spec
from posbias.audit.steps import audit, write_reports
from posbias.errors import InputError


def test_attention_calibration_is_the_calibrated_spec_with_the_paper_s_defaults():
    ref, settings = apply(parse_model_spec("bi-encoder:offline:all-MiniLM-L6-v2?batch_size=8"), settings_with(None),
                          {"kind": "attention_calibration"})
    assert ref.options == {"batch_size": 8, "calibration_basket": 128, "calibration_strength": 0.5,
                           "calibration_depth": 0.5}
    assert ref.name == "bi-encoder-all-MiniLM-L6-v2" and settings == settings_with(None)
    assert parse_mitigation("attention_calibration?basket=64&strength=0.25") == {
        "kind": "attention_calibration", "basket": 64, "strength": 0.25}


@pytest.mark.parametrize("mitigation, spec, message", [
    ({"kind": "attention_calibration"}, "cross-encoder:offline:x",
     r"attention_calibration applies to bi-encoder, not to a cross-encoder"),
    ({"kind": "attention_calibration"}, "checkpoint:ckpt", r"attention_calibration applies to bi-encoder, not to a "
                                                           r"checkpoint"),
    ({"kind": "attention_calibration"}, "reader:mock:u_curve", r"applies to bi-encoder, not to a reader"),
    ({"kind": "position_balanced_finetuning", "model": "twin"}, "cross-encoder:offline:x",
     r"position_balanced_finetuning applies to bi-encoder, not to a cross-encoder"),
    ({"kind": "position_balanced_finetuning", "model": "twin"}, "llm-ranker:mock:x",
     r"position_balanced_finetuning applies to bi-encoder, not to a llm-ranker"),
    ({"kind": "position_balanced_finetuning"}, "bi-encoder:offline:x", r"position_balanced_finetuning needs model"),
    ({"kind": "attention_calibration", "strength": 0}, "bi-encoder:offline:x",
     r"attention_calibration.strength must be a number in \(0, 1\], got 0"),
    ({"kind": "attention_calibration", "depth": "half"}, "bi-encoder:offline:x",
     r"attention_calibration.depth must be a number in \(0, 1\], got 'half'"),
    ({"kind": "attention_calibration", "basket": 0}, "bi-encoder:offline:x",
     r"attention_calibration.basket must be a positive whole number, got 0"),
    ({"kind": "attention_calibration"}, "bi-encoder:offline:x?calibration_basket=64",
     r"already calibrates its attention"),
])
def test_embedder_mitigation_mistakes_are_one_line(mitigation, spec, message):
    with pytest.raises(InputError, match=message) as caught:
        apply(parse_model_spec(spec), settings_with(None), mitigation)
    assert "\n" not in str(caught.value)


def test_a_command_line_share_that_is_no_number_is_refused_by_name():
    with pytest.raises(InputError, match=r"attention_calibration.strength must be a number in \(0, 1\], got 'x'"):
        checked(parse_mitigation("attention_calibration?strength=x"), parse_model_spec("bi-encoder:offline:m"), "x")


def test_the_calibrated_audit_sits_beside_its_base_at_the_same_cost(tiny_backbone, tmp_path):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    model = SentenceTransformer(modules=[Transformer(tiny_backbone, max_seq_length=64), Pooling(32, "mean")],
                                device="cpu")
    with torch.no_grad():  # sharper attention than a random init's: something to calibrate
        for layer in model[0].auto_model.encoder.layer:
            layer.attention.self.query.weight.mul_(50)
    model.save(str(tmp_path / "st"))
    settings = {"sweep": {"n_queries": 3, "n_positions": 3, "n_distractors": 2}}
    common = dict(out=tmp_path / "a", batteries=["sweep"], settings=settings, cache_dir=str(tmp_path / "c"),
                  cache_mode="off")
    (base,) = audit(AuditJob(f"bi-encoder:{tmp_path / 'st'}", name="base", **common))
    (calibrated,) = audit(AuditJob(f"bi-encoder:{tmp_path / 'st'}", name="calibrated", mitigates="base",
                                   mitigation={"kind": "attention_calibration", "basket": 16}, **common))
    assert calibrated["model"]["calibration"] == {"basket": 16, "strength": 0.5, "depth": 0.5}
    assert calibrated["extra"]["doc_tokens"] == base["extra"]["doc_tokens"] == 124  # the same documents
    scores = [pd.read_parquet(tmp_path / "a" / name / "sweep.parquet")["score"] for name in ("base", "calibrated")]
    assert (scores[0] - scores[1]).abs().max() > 1e-6
    write_reports(tmp_path / "a")
    (row,) = pd.read_csv(tmp_path / "a" / "mitigations.csv").to_dict("records")
    assert row["mitigation"] == "attention calibration (basket 16, depth 0.5, strength 0.5)"
    assert row["cost_multiplier"] == 1.0  # one input per pair, as before
