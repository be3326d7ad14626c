"""Mitigations behind one interface (`posbias.audit.mitigations`): each changes only what it names, its effect on
a mock with a known curve is exact, the mitigation table sets it beside its base, and mistakes are one line."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from posbias.audit.mitigations import apply, checked, parse_mitigation
from posbias.audit.spec import parse_model_spec
from posbias.audit.jobs import AuditJob
from posbias.audit.steps import audit, write_reports
from posbias.errors import InputError
from posbias.reading.qa_builder import ends_first

HARMONIC_5 = (1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 5  # the gold tied with 4 others: chance
ORDER = {"order": {"n_queries": 12}}


def run(tmp_path, spec, name, settings=None, **mitigated):
    """One battery's audit: the first battery `settings` names."""
    return audit(AuditJob(spec, tmp_path / "a", list(settings or {})[:1] or None, settings=settings,
                          cache_dir=str(tmp_path / "cache"), cache_mode="off", name=name, **mitigated))


def curve(tmp_path, name, battery):
    return pd.read_csv(tmp_path / "a" / name / f"{battery}.curve.csv")


@pytest.mark.parametrize("mock", ["identity", "reverse"])
def test_self_consistency_over_balanced_orders_leaves_a_model_that_only_follows_its_input_at_chance(tmp_path, mock):
    spec = f"rankgpt:mock:{mock}?wrapper=messages"
    run(tmp_path, spec, "base", ORDER)
    (record,) = run(tmp_path, spec, "psc", ORDER, mitigation={"kind": "permutation_self_consistency", "k": 5,
                                                              "orders": "rotations"}, mitigates="base")
    # k = 5 rotations: every candidate enters at every place once, so all five tie: 1/rank averaged over the ties
    assert curve(tmp_path, "psc", "order")["mean"].tolist() == pytest.approx([HARMONIC_5] * 5)
    assert record["summary"]["psi"] == pytest.approx(0) and record["summary"]["significant_drops"] == 0
    assert record["extra"]["kendall_tau_reversed"] == pytest.approx(1)  # the output no longer follows the input
    assert record["extra"]["per_list_calls"] == 5
    write_reports(tmp_path / "a")
    (row,) = pd.read_csv(tmp_path / "a" / "mitigations.csv").to_dict("records")
    assert (row["of"], row["battery"], row["psi_before"], row["psi_after"]) == ("base", "order", pytest.approx(0.8), 0)
    assert row["cost_multiplier"] == 5.0  # five calls per list where there was one
    assert row["mean_before"] == pytest.approx(HARMONIC_5) and row["mean_after"] == pytest.approx(HARMONIC_5)
    # no measured time in the table: a run that took other seconds writes the same bytes
    tables = {suffix: (tmp_path / "a" / f"mitigations.{suffix}").read_bytes() for suffix in ("csv", "md", "tex")}
    for record_file in (tmp_path / "a").glob("*/order.json"):
        saved = json.loads(record_file.read_text())
        record_file.write_text(json.dumps({**saved, "seconds": saved["seconds"] * 7 + 1}))
    write_reports(tmp_path / "a")
    assert {suffix: (tmp_path / "a" / f"mitigations.{suffix}").read_bytes() for suffix in tables} == tables


def test_self_consistency_over_shuffles_makes_the_curve_flat_whatever_the_aggregate(tmp_path):
    for aggregate in ("borda", "rrf"):
        (record,) = run(tmp_path, "rankgpt:mock:identity?wrapper=messages", aggregate, ORDER,
                        mitigation={"kind": "permutation_self_consistency", "k": 3, "aggregate": aggregate},
                        mitigates="base")
        means = curve(tmp_path, aggregate, "order")["mean"]
        assert means.nunique() == 1 and record["summary"]["psi"] == 0  # the same 3 orders from any input order


def test_sliding_windows_say_where_the_gold_entered(tmp_path):
    (record,) = run(tmp_path, "rankgpt:mock:identity?wrapper=messages", "windows",
                    {"order": {"n_queries": 4, "n_candidates": 6, "window": 4, "step": 2}})
    assert record["extra"]["windows"] == [[2, 6], [0, 4]]  # ranked from the back, as RankGPT
    values = pd.read_parquet(tmp_path / "a" / "windows" / "order.parquet")
    assert values.groupby("position")["entered_window"].first().tolist() == [1, 1, 0, 0, 0, 0]
    # the mock keeps every window's order: the gold stays where it entered
    assert curve(tmp_path, "windows", "order")["mean"].tolist() == pytest.approx([1 / (p + 1) for p in range(6)])
    assert record["extra"]["per_list_calls"] == 2


def test_the_best_documents_at_both_ends():
    assert ends_first([1, 2, 3, 4, 5]) == [1, 3, 5, 4, 2]
    assert ends_first([1, 2, 3, 4]) == [1, 3, 4, 2]


def test_relevance_ordered_context_moves_the_u_curve_onto_the_top_ranks(tmp_path):
    settings = {"reader": {"n_questions": 12, "n_documents": 5}}
    run(tmp_path, "reader:mock:u_curve", "reader", settings)
    (record,) = run(tmp_path, "reader:mock:u_curve", "ends", settings,
                    mitigation={"kind": "relevance_ordered_context"}, mitigates="reader")
    # retrieval ranks 1-5 sit at context places 1, 5, 2, 4, 3: the mock's U over places, read by rank
    assert curve(tmp_path, "reader", "reader")["mean"].tolist() == pytest.approx([1, 7 / 12, 6 / 12, 7 / 12, 1])
    assert curve(tmp_path, "ends", "reader")["mean"].tolist() == pytest.approx([1, 1, 7 / 12, 7 / 12, 6 / 12])
    assert record["extra"]["arrange"] == "ends" and record["mitigation"]["of"] == "reader"
    write_reports(tmp_path / "a")
    (row,) = pd.read_csv(tmp_path / "a" / "mitigations.csv").to_dict("records")
    assert row["cost_multiplier"] == 1.0 and row["mean_after"] == pytest.approx(row["mean_before"])
    # the embedded world's retriever ranks the answer first for all 12 questions: at the ranks it retrieves, the
    # rearrangement changes nothing either
    base = json.loads((tmp_path / "a" / "reader" / "reader.json").read_text())
    assert base["extra"]["gold_rank_shares"] == [1.0, 0, 0, 0, 0] and row["retrieved_after"] == row["retrieved_before"]
    assert "mitigations" not in json.dumps(record["settings"])  # what it changed is the battery's arrange
    assert "Mitigation: relevance ordered context" in (tmp_path / "a" / "ends" / "card.html").read_text()


def test_relevance_ordered_context_shows_its_effect_where_the_retriever_puts_the_gold_document(tmp_path):
    """Finding 3 of issue 46: with gold ranks weighted uniformly the U-shaped reader's mean cannot change; at a
    retriever's ranks (mostly near the top, where the rearrangement moves them to the ends) it rises."""
    settings = {"reader": {"n_questions": 12, "n_documents": 5}}
    run(tmp_path, "reader:mock:u_curve", "reader", settings)
    run(tmp_path, "reader:mock:u_curve", "ends", settings, mitigation={"kind": "relevance_ordered_context"},
        mitigates="reader")
    path = tmp_path / "a" / "reader" / "reader.json"
    base = json.loads(path.read_text())
    base["extra"]["gold_rank_shares"] = [0.4, 0.3, 0.2, 0.1, 0.0]
    path.write_text(json.dumps(base))
    write_reports(tmp_path / "a")
    (row,) = pd.read_csv(tmp_path / "a" / "mitigations.csv").to_dict("records")
    assert row["retrieved_before"] == pytest.approx(0.4 + 0.3 * 7 / 12 + 0.2 * 6 / 12 + 0.1 * 7 / 12)
    assert row["retrieved_after"] == pytest.approx(0.4 + 0.3 + 0.2 * 7 / 12 + 0.1 * 7 / 12)
    assert row["mean_after"] == pytest.approx(row["mean_before"])  # the uniform mean: unchanged by construction


class RecordingReader:
    """A reader that answers nothing and keeps every prompt it was sent."""

    def __init__(self):
        self.prompts = []

    def generate(self, requests, decoding):
        from posbias.llm.types import Completion

        self.prompts += [request.prompt for request in requests]
        return [Completion(text="", finish_reason="stop", prompt_tokens=None, completion_tokens=None, latency_s=0.0,
                           cache_key="", cache_hit=False) for _ in requests]


def test_query_aware_contextualization_asks_the_question_before_and_after_the_same_documents():
    """What the mitigation changes is the prompt alone: the question also before the documents, which stay the same
    documents in the same order, one prompt per example as before (the cost multiplier counts prompts)."""
    from posbias.audit.batteries import reader_battery
    from posbias.audit.battery_settings import settings_with

    _, settings = apply(parse_model_spec("reader:mock:u_curve"), settings_with({"reader": {"n_questions": 3}}),
                        {"kind": "query_aware_contextualization"})
    assert settings["reader"]["prompt"] == "query_aware" and settings["reader_grid"]["prompt"] == "query_aware"
    plain, aware = RecordingReader(), RecordingReader()
    reader_battery(plain, settings_with({"reader": {"n_questions": 3}})["reader"])
    result = reader_battery(aware, settings["reader"])
    assert len(plain.prompts) == len(aware.prompts) == 3 * 5 and result.extra["prompt"] == "query_aware"
    for before, after in zip(plain.prompts, aware.prompts):
        instruction, documents, question = before.split("\n\n")
        assert after == "\n\n".join([instruction, question.removesuffix("\nAnswer:"), documents, question])
        assert question.startswith("Question: ") and documents.startswith("Document [1]")


def test_query_aware_contextualization_sits_beside_its_base_on_the_mitigation_table(tmp_path):
    settings = {"reader": {"n_questions": 6, "n_documents": 3}}
    run(tmp_path, "reader:mock:u_curve", "reader", settings)
    (record,) = run(tmp_path, "reader:mock:u_curve", "qac", settings,
                    mitigation={"kind": "query_aware_contextualization"}, mitigates="reader")
    assert record["extra"]["prompt"] == "query_aware" and record["mitigation"]["of"] == "reader"
    write_reports(tmp_path / "a")
    (row,) = pd.read_csv(tmp_path / "a" / "mitigations.csv").to_dict("records")
    # the mock reads where the gold document sits, not the prompt: the same curve, at the same number of prompts
    assert row["mitigation"] == "query aware contextualization" and row["cost_multiplier"] == 1.0
    assert row["mean_after"] == pytest.approx(row["mean_before"])


def test_the_retriever_s_gold_ranks_count_the_first_answer_bearing_document():
    from posbias.audit.batteries import retrieved_gold_ranks

    records = [{"ctxs": [{"hasanswer": False}, {"hasanswer": True}, {"hasanswer": True}]},
               {"ctxs": [{"hasanswer": True}, {"hasanswer": False}, {"hasanswer": False}]},
               {"ctxs": [{"hasanswer": False}] * 3}]
    assert retrieved_gold_ranks(records, 3) == {"gold_rank_shares": [0.5, 0.5, 0.0], "gold_rank_questions": 2}
    assert retrieved_gold_ranks(records[2:], 3) == {}


def test_window_aggregation_is_the_windowed_spec_and_counts_its_windows(tiny_backbone, tmp_path):
    from posbias.audit.export import export_checkpoint
    from test_audit_models import firstp_checkpoint

    exported = export_checkpoint(firstp_checkpoint(tiny_backbone, tmp_path / "ckpt"), str(tmp_path / "hf"))
    settings = {"sweep": {"n_queries": 3, "n_positions": 3, "n_distractors": 2, "doc_tokens": 48}}
    (base,) = run(tmp_path, f"cross-encoder:{exported}", "base", settings)
    (mitigated,) = run(tmp_path, f"cross-encoder:{exported}", "maxp", settings,
                       mitigation={"kind": "window_aggregation", "window": 8}, mitigates="base")
    (by_spec,) = run(tmp_path, f"cross-encoder:{exported}?window=8&stride=8&aggregate=max", "spec", settings)
    assert mitigated["spec"].endswith("?window=8&stride=8&aggregate=max")
    values = [pd.read_parquet(tmp_path / "a" / name / "sweep.parquet") for name in ("maxp", "spec")]
    assert values[0]["score"].tolist() == values[1]["score"].tolist()
    n_pairs = base["extra"]["model_inputs"]
    assert n_pairs == 3 * (3 + 2)  # a pair each: 3 places and 2 distractors per question
    assert mitigated["extra"]["model_inputs"] > 3 * n_pairs  # documents of about 48 tokens in windows of 8


def test_window_aggregation_is_swept_over_its_base_s_documents(tiny_backbone, tmp_path):
    """Like for like: without a fixed `doc_tokens` the haystack is twice the model's window and the grid's lengths
    its multiples; reading windows of 8 leaves the model's window what it is, so the mitigated audit reads the same
    documents as its base and its reach is a fraction of the same window."""
    from posbias.audit.export import export_checkpoint
    from test_audit_models import firstp_checkpoint

    exported = export_checkpoint(firstp_checkpoint(tiny_backbone, tmp_path / "ckpt"), str(tmp_path / "hf"))
    settings = {"sweep": {"n_queries": 2, "n_positions": 3, "n_distractors": 2},
                "grid": {"n_queries": 2, "depths": [0.0, 1.0], "n_distractors": 2, "window_multiples": [1, 2]}}
    records = {}
    for name, mitigation in (("base", None), ("maxp", {"kind": "window_aggregation", "window": 8})):
        for battery in ("sweep", "grid"):
            (records[name, battery],) = audit(AuditJob(
                f"cross-encoder:{exported}", tmp_path / "a", [battery], settings=settings,
                cache_dir=str(tmp_path / "cache"), cache_mode="off", name=name,
                **({"mitigation": mitigation, "mitigates": "base"} if mitigation else {})))
    assert records["maxp", "sweep"]["extra"]["doc_tokens"] == records["base", "sweep"]["extra"]["doc_tokens"]
    assert records["maxp", "grid"]["extra"]["lengths"] == records["base", "grid"]["extra"]["lengths"]
    assert records["maxp", "sweep"]["model"]["window"] == records["base", "sweep"]["model"]["window"]
    assert records["base", "sweep"]["extra"]["doc_tokens"] > 2 * 8  # twice the model's window, not the windows'


@pytest.mark.parametrize("mitigation, spec, message", [
    ({"kind": "shuffle"}, "rankgpt:mock:identity", r"--mitigation: expected a mitigation \{kind: ...\} with kind one"),
    ({"kind": "permutation_self_consistency"}, "reader:mock:u_curve",
     r"permutation_self_consistency applies to models of capability list or judge, not to a reader"),
    ({"kind": "window_aggregation", "window": 8}, "bi-encoder:offline:x",
     r"window_aggregation applies to cross-encoder, not to a bi-encoder"),
    ({"kind": "window_aggregation"}, "cross-encoder:offline:x", r"window_aggregation needs window"),
    ({"kind": "permutation_self_consistency", "k": 0}, "rankgpt:mock:identity",
     r"permutation_self_consistency.k must be a positive whole number, got 0"),
    ({"kind": "permutation_self_consistency", "aggregate": "mean"}, "rankgpt:mock:identity",
     r"permutation_self_consistency.aggregate 'mean' is not one of borda, rrf"),
    ({"kind": "relevance_ordered_context", "k": 3}, "reader:mock:u_curve", r"unknown relevance_ordered_context"),
    ({"kind": "window_aggregation", "window": 8}, "cross-encoder:offline:x?window=16",
     r"already reads windows"),
])
def test_mitigation_mistakes_are_one_line(mitigation, spec, message):
    from posbias.audit.battery_settings import settings_with

    with pytest.raises(InputError, match=message):
        apply(parse_model_spec(spec), settings_with(None), mitigation)


def test_the_command_line_form():
    assert parse_mitigation("permutation_self_consistency?k=3&aggregate=rrf") == {
        "kind": "permutation_self_consistency", "k": 3, "aggregate": "rrf"}
    assert checked(parse_mitigation("relevance_ordered_context"), parse_model_spec("reader:mock:u_curve"), "x") == {
        "kind": "relevance_ordered_context"}
    with pytest.raises(InputError, match="--mitigation needs --mitigates"):
        audit(AuditJob("reader:mock:u_curve", "unused", mitigation={"kind": "relevance_ordered_context"}))
