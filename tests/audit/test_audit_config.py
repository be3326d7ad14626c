"""The `audit` config section: the demo's audit as jobs (a model per spec or trained model, a job per battery,
local decoders marked), and each mistake named by its key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from posbias.config import ConfigError, load_config, prepare

ROOT = Path(__file__).resolve().parents[2]
DEMO = yaml.safe_load((ROOT / "config.yaml").read_text())


def with_audit(models: dict, settings: dict | None = None) -> dict:
    data = json.loads(json.dumps(DEMO))
    data["audit"] = {"models": models, **({"settings": settings} if settings else {})}
    return data


def test_the_demo_s_audit_as_jobs():
    audit = load_config(ROOT / "config.yaml").audit
    assert audit.spec("exported_firstp") == "cross-encoder:results/audit/exported/firstp_cls/seed1"
    # a mitigated entry: its base's model, the mitigation and the name it mitigates in the job
    assert audit.spec("exported_firstp_maxp") == audit.spec("exported_firstp")
    assert audit.job("exported_firstp_maxp")["mitigation"] == {"kind": "window_aggregation", "window": 24,
                                                               "stride": 24, "aggregate": "max"}
    assert audit.job("exported_firstp_maxp")["mitigates"] == "exported_firstp"
    assert audit.spec("longp_debiased_checkpoint") == "checkpoint:results/models/longp_debiased/seed1"
    assert audit.batteries("mock_reader_ends") == ["reader"] and audit.batteries("longp_debiased_checkpoint") \
        == ["sweep"]
    assert audit.settings("mock_reader_ends")["reader"] == audit.settings("mock_reader")["reader"]
    assert set(audit.mitigated()) == {"exported_firstp_maxp", "longp_debiased_checkpoint", "mock_reader_ends",
                                      "rankgpt_keep_order_psc", "smollm2_reader_qac", "smollm2_reader_calibrated",
                                      "smollm2_reader_mspoe", "smollm2_reader_sorted", "smollm2_reader_sorted_iter",
                                      "minilm_calibrated", "minilm_balanced", "smollm2_judge_both_orders",
                                      "gpt4_0613_judge_mtbench_both_orders", "gpt4_0613_judge_mtbench_psc",
                                      "smollm2_judge_psc"}
    assert audit.local_decoder("smollm2_judge") == 1 and audit.gpu("gpt4_0613_judge_mtbench") == 0
    assert audit.inputs("gpt4_0613_judge_mtbench")[0].endswith("judges/released/mtbench-position-bias.jsonl.gz")
    assert audit.local_decoder("smollm2_reader_qac") == 1  # SmolLM2 decodes: one decoder at a time
    assert audit.spec("firstp_cls_checkpoint") == "checkpoint:results/models/firstp_cls/seed1"
    assert audit.inputs("exported_firstp") == ["results/audit/exported/firstp_cls/seed1"]
    assert audit.inputs("minilm") == []
    assert ("smollm2_reader", "reader") in audit.jobs() and ("minilm", "probes") in audit.jobs()
    assert ("firstp_cls_checkpoint", "probes") not in audit.jobs()  # its batteries: [sweep]
    assert [audit.local_decoder(m) for m in ("smollm2_ranker", "smollm2_reader", "rankgpt_keep_order", "minilm",
                                             "mock_reader")] == [0, 1, 0, 0, 0]  # a pointwise ranker does not decode
    settings = audit.settings("smollm2_ranker")
    assert settings["sweep"]["doc_tokens"] == 160 and settings["sweep"]["n_positions"] == 6  # over the defaults


def test_the_full_embedded_config_audits_smollm2_with_every_battery_the_demo_leaves_out():
    audit = load_config(ROOT / "config" / "embedded-full.yaml").audit
    assert audit.batteries("smollm2_ranker") == ["sweep", "probes"]
    assert audit.batteries("smollm2_reader") == ["reader", "reader_grid"]
    assert audit.job("smollm2_reader_ends")["mitigates"] == "smollm2_reader"
    assert audit.batteries("mock_reader") == ["reader", "reader_grid"]  # the demo's stay


@pytest.mark.parametrize("models, settings, message", [
    ({"x": {"trained": {"model": "nope"}}}, None, r"audit.models.x.trained.model: 'nope' is not a key of models"),
    ({"x": {"trained": {"model": "firstp_e5"}}}, None, r"audit.models.x.trained.model: 'firstp_e5' is never trained"),
    ({"x": {"trained": {"model": "firstp", "seed": 9}}}, None, r"audit.models.x.trained.seed: 9 is not a training"),
    ({"x": {"model": "ranker:y"}}, None, r"audit.models.x: model spec 'ranker:y': expected KIND:TARGET"),
    ({"x": {"model": "rankgpt:mock:identity", "batteries": ["sweep"]}}, None,
     r"audit.models.x: .*a rankgpt takes the batteries order, not 'sweep'"),
    ({"x": {"model": "rankgpt:mock:identity"}}, {"order": {"n_docs": 3}},
     r"audit.settings: audit settings.order: unknown keys \['n_docs'\]"),
    ({"x": {"model": "rankgpt:mock:identity", "trained": {"model": "firstp"}}}, None, r"audit.models.x"),
    ({"exported": {"model": "rankgpt:mock:identity"}}, None,
     r"audit.models.exported: name 'exported' is a directory of the audit's own"),
    ({"x": {"mitigates": "nope", "mitigation": {"kind": "relevance_ordered_context"}}}, None,
     r"audit.models.x.mitigates: 'nope' is not a key of audit.models"),
    ({"r": {"model": "reader:mock:u_curve"},
      "x": {"mitigates": "r", "mitigation": {"kind": "relevance_ordered_context"}},
      "y": {"mitigates": "x", "mitigation": {"kind": "relevance_ordered_context"}}}, None,
     r"audit.models.y.mitigates: 'x' is itself mitigated"),
    ({"r": {"model": "reader:mock:u_curve"}, "x": {"mitigates": "r", "mitigation": {"kind": "window_aggregation"}}},
     None, r"audit.models.x: audit.models.x.mitigation: window_aggregation applies to cross-encoder, not to a reader"),
    ({"r": {"model": "reader:mock:u_curve"}, "x": {"mitigates": "r", "mitigation": {"kind": "debiased_training"}}},
     None, r"audit.models.x.mitigation: debiased_training mitigates a trained model; audit.models.r names none"),
    ({"f": {"trained": {"model": "firstp"}}, "x": {"mitigates": "f", "mitigation": {"kind": "debiased_training",
                                                                                    "model": "longp_debiased"}}},
     None, r"audit.models.x.mitigation.model: 'longp_debiased' is not the de-biased twin of 'firstp'"),
    ({"x": {"model": "reader:mock:u_curve", "mitigates": "x", "mitigation": {"kind": "relevance_ordered_context"}}},
     None, r"audit.models.x"),
])
def test_mistakes_are_named_by_their_key(models, settings, message):
    with pytest.raises(ConfigError, match=message):
        prepare(with_audit(models, settings))


def test_a_config_may_hold_the_audit_alone():
    config = prepare({"audit": {"models": {"keep": {"model": "rankgpt:mock:identity?wrapper=messages"}}}})
    assert config.audit.jobs() == [("keep", "order")]
