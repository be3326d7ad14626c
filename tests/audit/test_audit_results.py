"""Length-controlled curves (`posbias.audit.results.by_length`): a battery on real text summarised per
document-length bucket (PosIR's, arXiv 2601.08363) beside the pooled curve, each bucket by the shared metric suite."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from posbias.audit.battery_settings import settings_with
from posbias.audit.results import (MIN_BUCKET_UNITS, BatteryResult, chance, length_bucket, length_buckets,
                                   summarise_result)
from posbias.scoring.protocol import Scorer
from posbias.stats.position_curve import curve_summary, position_curve

STATS = settings_with(None)["statistics"]
BUCKETS = ["(0, 512]", "(512, 1024]", "(1024, 1536]", "(1536, ∞)"]


def write_source(directory) -> dict:
    """The embedded world written out in the real formats a `source` names: queries TSV, TREC qrels, passages JSONL."""
    from posbias.audit.haystack import world
    from posbias.io import write_documents, write_qrels, write_queries

    questions, pool = world()
    write_queries(directory / "queries.tsv", {q.qid: q.text for q in questions})
    write_qrels(directory / "qrels.txt", {q.qid: {f"rel{i}": 1} for i, q in enumerate(questions)})
    write_documents(directory / "passages.jsonl", [*({"id": f"pool{i}", "text": t} for i, t in enumerate(pool)),
                                                   *({"id": f"rel{i}", "text": q.needle}
                                                     for i, q in enumerate(questions))])
    return {"queries": str(directory / "queries.tsv"), "qrels": str(directory / "qrels.txt"),
            "passages": str(directory / "passages.jsonl"), "pool_size": len(pool)}


class LongLateShortEarly(Scorer):
    """The needle's document scores 1.0 where it is long (over 512 words) and the needle at one of the first three
    depths, or short and the needle deeper; else 0.5, under every distractor's 0.75. Pooled, the two cancel."""

    window = 256

    def score(self, pairs, metas=None):
        return np.array([0.75 if m["gold_index"] is None else
                         1.0 if (len(d.split()) > 512) == (m["gold_index"] < 3) else 0.5
                         for (_, d), m in zip(pairs, metas)])

    def count_tokens(self, text):
        return len(text.split())


def test_buckets_are_posir_s_right_closed_token_intervals():
    assert [length_bucket(n) for n in (1, 512, 513, 1024, 1025, 1536, 1537, 10 ** 6)] == [
        BUCKETS[0], BUCKETS[0], BUCKETS[1], BUCKETS[1], BUCKETS[2], BUCKETS[2], BUCKETS[3], BUCKETS[3]]
    assert length_buckets() == BUCKETS
    assert length_bucket(100, (50,)) == "(50, ∞)" and length_bucket(50, (50,)) == "(0, 50]"


def test_a_length_dependent_effect_shows_in_the_buckets_and_not_pooled(tmp_path):
    """A grid on real-format files at 100 and 600 words: long documents lose the needle past the third depth,
    short ones find it only there. Pooled over every (question, length) the curve is flat; per bucket each effect
    is whole, and each bucket's curve and summary are the metric suite's on that bucket's rows."""
    from posbias.audit.batteries import grid_battery

    settings = {**settings_with(None)["grid"], "n_queries": 12, "lengths": [100, 600], "source": write_source(tmp_path)}
    result = summarise_result(grid_battery(LongLateShortEarly(), settings), STATS, 256, STATS["test"])
    assert result.extra["doc_length_unit"] == "model tokens"
    found = result.summary["by_length"]
    assert found["unit"] == "model tokens" and found["bounds"] == [512, 1024, 1536]
    rows = {row["bucket"]: row for row in found["buckets"]}
    assert list(rows) == ["all", *BUCKETS]
    assert rows["all"]["units"] == 24 and rows[BUCKETS[0]]["units"] == rows[BUCKETS[1]]["units"] == 12
    assert rows[BUCKETS[2]]["units"] == 0 and rows[BUCKETS[2]]["summary"] is None
    pooled, short, long = rows["all"]["summary"], rows[BUCKETS[0]]["summary"], rows[BUCKETS[1]]["summary"]
    assert pooled["psi"] == pytest.approx(0) and pooled["significant_drops"] == 0
    assert long["significant_drops"] == 6 and long["psi"] == pytest.approx(0.8)  # 1 to 1/5: last of five
    assert short["significant_drops"] == 0 and short["psi"] == pytest.approx(0.8)  # it rises: no drop
    depths = pd.Series(settings["depths"], index=range(9))
    for label in BUCKETS[:2]:
        # the shared suite on the bucket's rows: a grid's unit is a question at one of its lengths
        part = result.values[result.values["doc_length"].map(length_bucket) == label]
        part = part.assign(unit=part["unit"] + "@" + part["length"].astype(str))
        curve = position_curve(part, test=STATS["test"], correction=STATS["correction"], alpha=STATS["alpha"],
                               confidence=STATS["confidence"], n_resamples=STATS["n_resamples"], seed=STATS["seed"])
        expected = curve_summary(curve, coordinates=depths, chance=chance(settings["n_distractors"]))
        assert pd.DataFrame(rows[label]["curve"]).equals(curve[list(rows[label]["curve"][0])])
        expected.pop("reach_fraction")  # the audit gives it in tokens: where the needle ends, over the window
        assert {k: rows[label]["summary"][k] for k in expected} == pytest.approx(expected, nan_ok=True)
    assert long["mean_weighted"] == pytest.approx(1 * 0.175 + 0.2 * 0.825)  # depths up to 0.1 stand for 0.175


def test_small_buckets_are_shown_but_marked_and_the_json_keeps_them(tmp_path):
    """12 units of 300 tokens, 3 of 1200 (too few: marked, still summarised), 1 of 2000 (one unit: no paired test,
    no curve); the record round-trips through JSON as `posbias audit` writes it."""
    rng = np.random.default_rng(0)
    lengths = [300] * 12 + [1200] * 3 + [2000]
    values = pd.DataFrame([{"unit": f"q{u}", "position": p, "doc_length": n,
                            "value": float(np.clip(1 - 0.2 * p + rng.normal(0, 0.05), 0, 1))}
                           for u, n in enumerate(lengths) for p in range(4)])
    result = summarise_result(BatteryResult("sweep", "MRR", values, extra={"doc_length_unit": "model tokens",
                                                                           "chance": chance(4)}),
                              STATS, None, STATS["test"])
    rows = {row["bucket"]: row for row in json.loads(json.dumps(result.summary["by_length"]))["buckets"]}
    assert rows["all"]["summary"]["psi"] == pytest.approx(result.summary["psi"])  # the pooled curve itself
    assert rows[BUCKETS[0]]["units"] == 12 and not rows[BUCKETS[0]]["few_units"]
    assert rows[BUCKETS[0]]["summary"]["significant_drops"] == 3
    assert rows[BUCKETS[2]]["units"] == 3 < MIN_BUCKET_UNITS and rows[BUCKETS[2]]["few_units"]
    assert rows[BUCKETS[2]]["summary"]["underpowered"]  # a sign-flip test over 3 units cannot reach 0.05
    assert rows[BUCKETS[3]]["units"] == 1 and rows[BUCKETS[3]]["curve"] is None
    empty = rows[BUCKETS[1]]  # shown: no document of this length was tested
    assert empty["units"] == 0 and empty["summary"] is None and empty["curve"] is None


def test_the_sweep_and_the_order_battery_record_lengths_on_real_text_only(tmp_path):
    """On real-format files the sweep counts each document in the model's tokens and the listwise order battery its
    list in words; the embedded world's documents, all built to one length, get no buckets."""
    from posbias.audit.batteries import order_battery, sweep_battery
    from posbias.audit.models import open_language_model
    from posbias.audit.spec import parse_model_spec

    source = write_source(tmp_path)
    sweep = {**settings_with(None)["sweep"], "n_queries": 12, "n_positions": 4, "doc_tokens": 120}
    real = summarise_result(sweep_battery(LongLateShortEarly(), {**sweep, "source": source}), STATS, 256,
                            STATS["test"])
    assert (real.values["doc_length"] <= 120).all() and real.values["doc_length"].min() > 100
    rows = {row["bucket"]: row for row in real.summary["by_length"]["buckets"]}
    assert rows[BUCKETS[0]]["units"] == 12 and rows[BUCKETS[0]]["summary"] == rows["all"]["summary"]
    embedded = summarise_result(sweep_battery(LongLateShortEarly(), sweep), STATS, 256, STATS["test"])
    assert "by_length" not in embedded.summary and "doc_length_unit" not in embedded.extra
    model = open_language_model(parse_model_spec("rankgpt:mock:identity?wrapper=messages"), str(tmp_path), "off")
    order = summarise_result(order_battery(model, {**settings_with(None)["order"], "source": source}), STATS, None,
                             STATS["test"])
    assert order.summary["by_length"]["unit"] == "words"
    assert order.values.groupby("unit")["doc_length"].nunique().eq(1).all()  # one list length per question
