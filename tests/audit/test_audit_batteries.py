"""The batteries on mock models whose position curves are known exactly: every number of the metric suite has an
exact expected value, and bootstrap intervals reproduce by seed."""

from __future__ import annotations

import numpy as np
import pytest

from posbias.audit.batteries import (expected_reciprocal_rank, order_battery, reader_battery, settings_with,
                                     summarise, sweep_battery)
from posbias.audit.models import PairModel, open_language_model
from posbias.audit.spec import parse_model_spec
from posbias.errors import InputError

STATS = settings_with(None)["statistics"]
SMALL = {"n_queries": 12, "n_positions": 6, "n_distractors": 4, "doc_tokens": 120}
CHANCE = float(np.mean([1, 1 / 2, 1 / 3, 1 / 4, 1 / 5]))  # the needle tied with 4 distractors


class Staircase(PairModel):
    """Scores the needle's document 1.0 at the first two positions and 0.5 after; every distractor 0.75."""

    window = 50

    def score(self, pairs, metas=None):
        return np.array([0.75 if m["gold_index"] is None else (1.0 if m["gold_index"] < 2 else 0.5) for m in metas])

    def count_tokens(self, text):
        return len(text.split())


def sweep_settings(**changes):
    return {**settings_with(None)["sweep"], **SMALL, **changes}


def test_ties_count_as_the_mean_over_their_orders():
    assert expected_reciprocal_rank(0.5, np.array([0.5, 0.5, 1.0])) == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert expected_reciprocal_rank(2.0, np.array([0.5, 1.0])) == 1.0


def test_a_staircase_ranker_s_sweep_has_exact_metrics():
    result = summarise(sweep_battery(Staircase(), sweep_settings()), STATS, window=50)
    assert result.curve["mean"].tolist() == pytest.approx([1, 1, 0.2, 0.2, 0.2, 0.2])
    summary = result.summary
    assert summary["psi"] == pytest.approx(0.8) and summary["worst_drop"] == pytest.approx(0.8)
    assert summary["best_worst_gap"] == pytest.approx(0.8)
    assert summary["primacy"] == pytest.approx(1 - 0.4) and summary["recency"] == pytest.approx(0.2 - 0.4)
    assert summary["significant_drops"] == 4 and summary["reach"] == 1
    second = result.values[result.values["position"] == 1]["tokens"].mean()
    assert summary["reach_tokens"] == pytest.approx(second) and summary["reach_fraction"] == pytest.approx(second / 50)
    # the needle starts at the very beginning and near the end of documents of at most 120 tokens
    assert result.values.groupby("position")["tokens"].mean().iloc[0] == 0
    assert result.extra["chance"] == pytest.approx(CHANCE)


def test_the_haystack_counts_the_model_s_tokens_and_refuses_too_few_boundaries():
    result = sweep_battery(Staircase(), sweep_settings())
    assert result.values["tokens"].max() <= 120
    with pytest.raises(InputError, match=r"fewer than 40 positions; raise doc_tokens \(30\) or lower n_positions"):
        sweep_battery(Staircase(), sweep_settings(doc_tokens=30, n_positions=40))


def test_a_pointwise_language_model_through_the_mock_backend(tmp_path):
    from posbias.audit.llm_ranker import PointwiseLLM

    oracle = PointwiseLLM(open_language_model(parse_model_spec("llm-ranker:mock:oracle"), str(tmp_path), "off"))
    flat = summarise(sweep_battery(oracle, sweep_settings(n_positions=5)), STATS)
    assert flat.curve["mean"].tolist() == [1.0] * 5 and flat.summary["psi"] == 0
    assert flat.summary["significant_drops"] == 0 and flat.summary["reach"] == 4
    # u_curve says yes to the relevant document for a share 1, .625, .5, .625, 1 of the 12 questions (the first
    # 12, 7, 6, 7, 12); a no ties the needle with the 4 distractors (all no)
    u = PointwiseLLM(open_language_model(parse_model_spec("llm-ranker:mock:u_curve"), str(tmp_path), "off"))
    curve = summarise(sweep_battery(u, sweep_settings(n_positions=5)), STATS)
    expected = [(k + (12 - k) * CHANCE) / 12 for k in (12, 7, 6, 7, 12)]
    assert curve.curve["mean"].tolist() == pytest.approx(expected)
    middle = float(np.mean(expected[1:4]))
    assert curve.summary["primacy"] == pytest.approx(expected[0] - middle)
    assert curve.summary["recency"] == pytest.approx(expected[4] - middle)
    assert curve.summary["psi"] == pytest.approx(1 - expected[2] / expected[0])


def test_bootstrap_intervals_reproduce_by_seed(tmp_path):
    from posbias.audit.llm_ranker import PointwiseLLM

    u = PointwiseLLM(open_language_model(parse_model_spec("llm-ranker:mock:u_curve"), str(tmp_path), "off"))
    battery = sweep_battery(u, sweep_settings(n_positions=5))
    first, again = (summarise(battery, STATS).curve.copy() for _ in range(2))
    other = summarise(battery, {**STATS, "seed": 7}).curve
    assert first.equals(again)
    assert not first["ci_low"].equals(other["ci_low"])
    assert first["mean"].equals(other["mean"])


def test_a_reader_s_lost_in_the_middle_curve_is_exact(tmp_path):
    reader = open_language_model(parse_model_spec("reader:mock:u_curve"), str(tmp_path), "off")
    settings = {**settings_with(None)["reader"], "n_questions": 12, "n_documents": 5}
    result = summarise(reader_battery(reader, settings), STATS, test="mcnemar")
    assert result.curve["mean"].tolist() == pytest.approx([1, 7 / 12, 6 / 12, 7 / 12, 1])
    assert result.summary["best_worst_gap"] == pytest.approx(0.5)
    # exact McNemar: 5 and 6 discordant questions, all one way: p = 2 / 2^5 and 2 / 2^6 before Holm
    assert result.curve["p"].tolist()[1:] == pytest.approx([2 / 2 ** 5, 2 / 2 ** 6, 2 / 2 ** 5, np.nan],
                                                           nan_ok=True)


@pytest.mark.parametrize("mock, expected", [("identity", [1, 1 / 2, 1 / 3, 1 / 4, 1 / 5]),
                                            ("reverse", [1 / 5, 1 / 4, 1 / 3, 1 / 2, 1])])
def test_a_listwise_reranker_s_order_curve_is_exact(tmp_path, mock, expected):
    model = open_language_model(parse_model_spec(f"rankgpt:mock:{mock}?wrapper=messages"), str(tmp_path), "off")
    result = summarise(order_battery(model, {**settings_with(None)["order"], "n_queries": 12}), STATS)
    assert result.curve["mean"].tolist() == pytest.approx(expected)
    assert result.summary["psi"] == pytest.approx(0.8)
    if mock == "identity":  # all 12 questions drop alike: the sign-flip test finds it, Holm-corrected
        assert result.summary["significant_drops"] == 4 and result.summary["reach"] == 0
    few = summarise(order_battery(model, {**settings_with(None)["order"], "n_queries": 4}), STATS)
    assert few.summary["significant_drops"] == 0  # 4 questions: no sign-flip p below 2 / 2^4, too few to tell


def test_the_sweep_reads_a_real_passage_collection(tmp_path):
    from posbias.audit.haystack import world
    from posbias.io import write_documents, write_qrels, write_queries

    questions, pool = world()  # written out in the real formats: queries TSV, TREC qrels, passages JSONL
    write_queries(tmp_path / "queries.tsv", {q.qid: q.text for q in questions})
    write_qrels(tmp_path / "qrels.txt", {q.qid: {f"rel{i}": 1} for i, q in enumerate(questions)})
    write_documents(tmp_path / "passages.jsonl", [*({"id": f"pool{i}", "text": t} for i, t in enumerate(pool)),
                                                  *({"id": f"rel{i}", "text": q.needle} for i, q in enumerate(questions))])
    source = {key: str(tmp_path / name) for key, name in
              (("queries", "queries.tsv"), ("qrels", "qrels.txt"), ("passages", "passages.jsonl"))}
    embedded = sweep_battery(Staircase(), sweep_settings())
    from_files = sweep_battery(Staircase(), sweep_settings(source={**source, "pool_size": len(pool)}))
    assert from_files.values.equals(embedded.values)  # the same questions, needles and pool: the same sweep
    smaller = sweep_battery(Staircase(), sweep_settings(source={**source, "pool_size": 50}))
    assert smaller.values["unit"].tolist() == embedded.values["unit"].tolist()
    with pytest.raises(InputError, match="holds none of the relevant passages"):
        write_qrels(tmp_path / "qrels.txt", {questions[0].qid: {"absent": 1}})
        sweep_battery(Staircase(), sweep_settings(source=source))


def test_the_probes_and_the_reader_read_real_files(tmp_path):
    from posbias.audit.batteries import probes_battery
    from posbias.audit.haystack import WORLD
    from posbias.litm.synthetic_qa import write_synthetic_qa
    from posbias.probes.synthetic import write_synthetic_redocred

    write_synthetic_redocred(tmp_path / "dev_revised.json", 0, 120)  # the Re-DocRED format, the embedded world
    probes = {**settings_with(None)["probes"], "n": 6, "positions": 4}
    score_by_length = type("ByLength", (Staircase,), {"score": lambda self, pairs, metas=None: np.array(
        [len(d) - 10 * d.find(q.split()[-1]) for q, d in pairs], dtype=float)})()
    embedded = probes_battery(score_by_length, probes)
    from_file = probes_battery(score_by_length, {**probes, "source": {"redocred": str(tmp_path / "dev_revised.json")}})
    assert from_file.values.drop(columns="unit").equals(embedded.values.drop(columns="unit"))
    write_synthetic_qa(tmp_path / "qa.jsonl.gz", WORLD, 12)  # the authors' retrieval-results format
    reader = open_language_model(parse_model_spec("reader:mock:u_curve"), str(tmp_path), "off")
    settings = {**settings_with(None)["reader"], "n_questions": 12}
    result = reader_battery(reader, {**settings, "source": {"qa": str(tmp_path / "qa.jsonl.gz")}})
    assert result.values.equals(reader_battery(reader, {**settings, "source": None}).values)
