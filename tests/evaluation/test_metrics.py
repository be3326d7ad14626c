import math

import pandas as pd
import pytest

from posbias.evaluation.metrics import per_query
from posbias.evaluation.seeds import average_over_seeds

QRELS = {"q1": {"d1": 1, "d3": 2, "d9": 0}, "q2": {"d5": 1}, "q4": {"d1": 1}}
RUN = {"q1": {"d2": 0.9, "d1": 0.8, "d3": 0.7}, "q3": {"d1": 1.0}, "q4": {"d7": 0.5, "d1": 0.5}}


def value(frame, qid, metric):
    return frame[(frame.qid == qid) & (frame.metric == metric)]["value"].item()


def test_hand_computed_values():
    frame = per_query(QRELS, RUN, ["RR@10", "P@2", "nDCG@10", "AP"])
    assert value(frame, "q1", "RR@10") == pytest.approx(1 / 2)
    assert value(frame, "q1", "P@2") == pytest.approx(1 / 2)
    dcg = 1 / math.log2(3) + 2 / math.log2(4)
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert value(frame, "q1", "nDCG@10") == pytest.approx(dcg / ideal)
    assert value(frame, "q1", "AP") == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_trec_eval_semantics_missing_queries_and_ties():
    frame = per_query(QRELS, RUN, ["RR@10"])
    # q2 is judged but absent from the run, q3 is in the run but unjudged: both skipped, as trec_eval does
    assert sorted(frame.qid.unique()) == ["q1", "q4"]
    # tied scores: trec_eval orders ties by document id, descending, so d7 comes before d1
    assert value(frame, "q4", "RR@10") == pytest.approx(1 / 2)


def test_unknown_metric_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown metric 'MRR@ten'"):
        per_query(QRELS, RUN, ["MRR@ten"])


def test_seed_averaging_and_mismatch():
    rows = [("m", "dev", "RR", q, s, v) for q, s, v in
            [("q1", 1, 0.5), ("q1", 2, 1.0), ("q2", 1, 0.0), ("q2", 2, 0.2)]]
    frame = pd.DataFrame(rows, columns=["system", "queryset", "metric", "qid", "seed", "value"])
    averaged = average_over_seeds(frame).set_index("qid")
    assert averaged.loc["q1", "value"] == pytest.approx(0.75) and averaged.loc["q2", "value"] == pytest.approx(0.1)
    assert set(averaged["n_seeds"]) == {2}
    with pytest.raises(ValueError, match="query q2 has 1 seed values"):
        average_over_seeds(frame.iloc[:3])


def test_ties_agree_with_pytrec_eval_for_cutoff_and_full_measures():
    import pytrec_eval

    qrels = {"q": {"d1": 1, "d5": 2}}
    run = {"q": {"d7": 0.5, "d1": 0.5, "d5": 0.5, "d0": 0.9}}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "ndcg_cut.10", "map"}).evaluate(run)["q"]
    frame = per_query(qrels, run, ["RR", "RR@10", "nDCG@10", "AP"])
    assert value(frame, "q", "RR") == pytest.approx(expected["recip_rank"])
    assert value(frame, "q", "RR@10") == pytest.approx(expected["recip_rank"])
    assert value(frame, "q", "nDCG@10") == pytest.approx(expected["ndcg_cut_10"])
    assert value(frame, "q", "AP") == pytest.approx(expected["map"])
