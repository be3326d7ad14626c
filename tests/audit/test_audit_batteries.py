"""The batteries on mock models whose position curves are known exactly: every number of the metric suite has an
exact expected value, and bootstrap intervals reproduce by seed."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from posbias.audit.batteries import order_battery, reader_battery, sweep_battery
from posbias.audit.battery_settings import settings_with
from posbias.audit.results import expected_reciprocal_rank, summarise
from posbias.audit.haystack import world
from posbias.audit.models import open_language_model
from posbias.scoring.protocol import Scorer
from posbias.audit.spec import parse_model_spec
from posbias.errors import InputError

STATS = settings_with(None)["statistics"]
NEEDLES = {q.qid: q.needle for q in world()[0]}
SMALL = {"n_queries": 12, "n_positions": 6, "n_distractors": 4, "doc_tokens": 120}
CHANCE = float(np.mean([1, 1 / 2, 1 / 3, 1 / 4, 1 / 5]))  # the needle tied with 4 distractors


class Staircase(Scorer):
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
    # the needle falls below chance (0.2 < 0.457): more than all of its margin over chance is lost
    assert summary["psi_above_chance"] == pytest.approx(0.8 / (1 - CHANCE))
    assert summary["primacy"] == pytest.approx(1 - 0.4) and summary["recency"] == pytest.approx(0.2 - 0.4)
    assert summary["significant_drops"] == 4 and summary["reach"] == 1
    second = result.values[result.values["position"] == 1]
    ends = (second["tokens"] + [len(q.split()) for q in second["unit"].map(NEEDLES)]).mean()
    assert summary["reach_tokens"] == pytest.approx(ends)  # where the needle ends at the reach position
    assert summary["reach_fraction"] == pytest.approx(ends / 50)
    assert not summary["reach_censored"] and not summary["underpowered"]
    # the needle starts at the very beginning and near the end of documents of at most 120 tokens
    assert result.values.groupby("position")["tokens"].mean().iloc[0] == 0
    assert result.extra["chance"] == pytest.approx(CHANCE)


def test_the_haystack_counts_the_model_s_tokens_and_refuses_too_few_boundaries():
    result = sweep_battery(Staircase(), sweep_settings())
    assert result.values["tokens"].max() <= 120
    with pytest.raises(InputError, match=r"fewer than 40 positions; raise doc_tokens \(30\) or lower n_positions"):
        sweep_battery(Staircase(), sweep_settings(doc_tokens=30, n_positions=40))


def test_a_pointwise_language_model_through_the_mock_backend(tmp_path):
    from posbias.scoring.llm_ranker import PointwiseLLM

    oracle = PointwiseLLM(open_language_model(parse_model_spec("llm-ranker:mock:oracle"), str(tmp_path), "off"))
    flat = summarise(sweep_battery(oracle, sweep_settings(n_positions=5)), STATS)
    assert flat.curve["mean"].tolist() == [1.0] * 5 and flat.summary["psi"] == 0
    assert flat.summary["psi_above_chance"] == 0
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
    # above chance, half of the 12 questions' margin is lost in the middle: (6/12)(1 - chance) of (1 - chance)
    assert curve.summary["psi_above_chance"] == pytest.approx(0.5)


def test_a_model_at_chance_everywhere_has_no_psi_above_chance_where_its_psi_reads_unbiased():
    class Constant(Staircase):
        def score(self, pairs, metas=None):
            return np.zeros(len(pairs))

    summary = summarise(sweep_battery(Constant(), sweep_settings()), STATS).summary
    assert summary["psi"] == 0 and summary["reference_mean"] == pytest.approx(CHANCE)
    assert np.isnan(summary["psi_above_chance"])


def test_bootstrap_intervals_reproduce_by_seed(tmp_path):
    from posbias.scoring.llm_ranker import PointwiseLLM

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
    assert result.summary["psi_above_chance"] == pytest.approx(result.summary["psi"])  # a reader's floor is 0
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
    # the gold ranked last is at the bottom, below the chance of a random list (0.457)
    assert result.summary["psi_above_chance"] == pytest.approx(0.8 / (1 - CHANCE))
    if mock == "identity":  # all 12 questions drop alike: the sign-flip test finds it, Holm-corrected
        assert result.summary["significant_drops"] == 4 and result.summary["reach"] == 0
    # the mock follows its input: reversed, the output is reversed (tau -1); one call per list, no answer mended
    assert result.extra["kendall_tau_reversed"] == pytest.approx(-1.0)
    assert -1 <= result.extra["kendall_tau_shuffled"] < 1
    assert result.extra["per_list_calls"] == 1 and result.extra["per_list_missing"] == 0
    assert result.extra["per_list_prompt_tokens"] > 0 and result.extra["per_list_repeated"] == 0
    few = summarise(order_battery(model, {**settings_with(None)["order"], "n_queries": 4}), STATS)
    assert few.summary["significant_drops"] == 0  # 4 questions: no sign-flip p below 2 / 2^4, too few to tell
    assert few.summary["underpowered"] and few.summary["reach_censored"]
    assert not result.summary["underpowered"]
    # what the units could detect: nothing with 4 (no p can be significant), nor a size for the mock's curve, the
    # same for every question (its differences do not vary)
    assert math.isnan(few.summary["detectable_drop"]) and math.isnan(result.summary["detectable_drop"])


def test_a_curve_states_the_drop_its_units_could_detect():
    """With varying units: the t-test's 80%-power drop at alpha over the tested positions, for the spread of the
    curve's paired differences (`posbias.stats.power`), on the card's summary and in the metric's units."""
    from posbias.audit.results import BatteryResult
    from posbias.stats.power import minimum_detectable_drop

    rng = np.random.default_rng(0)
    values = pd.DataFrame([{"unit": f"q{u}", "position": p, "value": float(rng.uniform(0.5, 1) - 0.1 * p)}
                           for u in range(12) for p in range(4)])
    summary = summarise(BatteryResult("sweep", "MRR", values), STATS).summary
    # an MRR is bounded: the drop counts the spread it adds (posbias.stats.power)
    assert summary["detectable_drop"] == pytest.approx(minimum_detectable_drop(values, 0, STATS["alpha"],
                                                                               bounded=True))
    assert minimum_detectable_drop(values, 0, STATS["alpha"]) < summary["detectable_drop"] < 1


def test_the_sweep_reads_a_real_passage_collection(tmp_path):
    from posbias.audit.haystack import world
    from posbias.io import write_documents, write_qrels, write_queries

    questions, pool = world()  # written out in the real formats: queries TSV, TREC qrels, passages JSONL
    write_queries(tmp_path / "queries.tsv", {q.qid: q.text for q in questions})
    write_qrels(tmp_path / "qrels.txt", {q.qid: {f"rel{i}": 1} for i, q in enumerate(questions)})
    write_documents(tmp_path / "passages.jsonl", [*({"id": f"pool{i}", "text": t} for i, t in enumerate(pool)),
                                                  *({"id": f"rel{i}", "text": q.needle}
                                                    for i, q in enumerate(questions))])
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
    from posbias.reading.synthetic_qa import write_synthetic_qa
    from posbias.docred.synthetic import write_synthetic_redocred

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


class ShortOrEarly(Staircase):
    """Scores the needle's document 1.0 when the document is at most 60 words long or the needle sits at one of the
    first three depths, else 0.5; every distractor 0.75."""

    def score(self, pairs, metas=None):
        return np.array([0.75 if m["gold_index"] is None else
                         (1.0 if len(d.split()) <= 60 or m["gold_index"] < 3 else 0.5)
                         for (_, d), m in zip(pairs, metas)])


def grid_settings(**changes):
    return {**settings_with(None)["grid"], "n_queries": 6, "lengths": [48, 96], **changes}


def test_a_grid_s_cells_are_exact():
    from posbias.audit.batteries import grid_battery
    from posbias.audit.results import summarise_grid

    result = summarise_grid(grid_battery(ShortOrEarly(), grid_settings()), STATS, window=50)
    cells = result.values.groupby(["length", "depth"])["value"].mean()
    assert cells.loc[48].tolist() == [1.0] * 9  # every depth of a 48-word document
    assert cells.loc[96].tolist() == pytest.approx([1, 1, 1] + [0.2] * 6)  # past the third depth: last of five
    assert result.summary["lengths"]["48"]["psi"] == 0 and result.summary["lengths"]["96"]["psi"] == pytest.approx(0.8)
    assert result.summary["psi"] == pytest.approx(0.8)  # the headline: the longest length
    assert sorted(result.curve["length"].unique()) == [48, 96] and len(result.curve) == 18
    assert result.extra["depths"] == settings_with(None)["grid"]["depths"]


def test_the_grid_counts_lengths_in_the_model_s_own_tokens(tokenizer):
    from posbias.audit.haystack import sweep_questions, world

    questions, pool = world()
    words = lambda text: len(text.split())  # noqa: E731
    pieces = lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])  # noqa: E731
    depths = settings_with(None)["grid"]["depths"]
    for count in (words, pieces):
        for item in sweep_questions(questions, pool, count, 4, len(depths), 2, 96, 0, depths):
            for text in [v.text for v in item.variants] + list(item.distractors):
                assert 96 - 20 < count(text) <= 96  # full, to within a passage, in the counting tokenizer's tokens
    by_words = sweep_questions(questions, pool, words, 1, len(depths), 0, 96, 0, depths)[0].variants[-1].text
    by_pieces = sweep_questions(questions, pool, pieces, 1, len(depths), 0, 96, 0, depths)[0].variants[-1].text
    assert words(by_pieces) < words(by_words)  # word pieces outnumber words: fewer words fit


def test_paraphrased_needles_share_fewer_words_with_the_question():
    from posbias.audit.haystack import world

    def overlap(questions):
        return np.mean([len(set(q.text.split()) & set(q.needle.rstrip(".").split())) for q in questions])

    lexical, paraphrased = world(needles="lexical")[0], world(needles="paraphrased")[0]
    assert [q.text for q in lexical] == [q.text for q in paraphrased]  # the same questions, other needles
    assert overlap(paraphrased) < overlap(lexical)
    with pytest.raises(InputError, match="needles 'fuzzy' is not one of lexical, paraphrased"):
        world(needles="fuzzy")


def test_a_reader_s_depth_by_length_grid_is_exact(tmp_path):
    from posbias.audit.batteries import reader_grid_battery
    from posbias.audit.results import summarise_grid

    reader = open_language_model(parse_model_spec("reader:mock:u_curve"), str(tmp_path), "off")
    settings = {**settings_with(None)["reader_grid"], "n_documents": [3, 5]}
    result = summarise_grid(reader_grid_battery(reader, settings), STATS, test="mcnemar")
    cells = result.values.groupby(["k", "depth"])["value"].mean()
    assert cells.tolist() == [1, 0.5, 1, 1, 0.5, 1]  # u_curve: right at both ends, the first half in the middle
    short, long = sorted(result.values["length"].unique())  # mean prompt tokens: the mock counts words
    assert result.values.groupby("k")["length"].first().tolist() == [short, long] and short < long


@pytest.mark.parametrize("overrides, message", [
    ({"sweep": 5}, r"audit settings.sweep: expected a mapping"),
    ({"sweep": {"n_queries": "a"}}, r"audit settings.sweep.n_queries: expected int, got 'a'"),
    ({"statistics": {"test": "bogus"}}, r"audit settings.statistics.test: 'bogus' is not one of t, wilcoxon"),
    ({"sweep": {"source": "x.tsv"}}, r"audit settings.sweep.source: expected null or a mapping with queries"),
    ({"grid": {"needles": "fuzzy"}}, r"audit settings.grid.needles: 'fuzzy' is not one of lexical, paraphrased"),
])
def test_bad_settings_are_one_line(overrides, message):
    with pytest.raises(InputError, match=message):
        settings_with(overrides)
    assert settings_with({"sweep": {"doc_tokens": None, "n_queries": 3}, "statistics": {"alpha": 0.1}})


def test_a_raw_score_s_curve_has_no_ratios():
    from posbias.audit.results import BatteryResult

    values = pd.DataFrame({"unit": ["a", "b", "c"] * 3, "position": [0] * 3 + [1] * 3 + [2] * 3,
                           "value": [0.5, 0.6, 0.4, 0.2, 0.3, 0.1, -0.9, -1.0, -1.1]})
    for metric in ("score", "MRR"):  # a raw score; a rate whose curve went negative (impossible, but guarded)
        summary = summarise(BatteryResult("probes", metric, values), STATS).summary
        assert np.isnan(summary["psi"]) and np.isnan(summary["worst_drop"]) and np.isnan(summary["primacy_relative"])
        assert summary["best_worst_gap"] == pytest.approx(0.5 + 1.0)
    curve = summarise(BatteryResult("probes", "score", values.assign(value=values["value"] + 2)), STATS).curve
    assert curve["relative"].isna().all()  # positive, but no true zero: still no ratios
