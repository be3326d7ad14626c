import io
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


# --- trec_eval agreement on a fixture in real TREC formats -----------------------------------------------------
#
# Tied scores straddle the cut-offs 10 and 20 and mix relevant, non-relevant and unjudged documents; document ids
# such as D9/D10 sort differently as strings and as numbers. The rank column disagrees with the scores on purpose
# (trec_eval ignores it). q3 is judged but not in the run, q4 is in the run but not judged, q5 has no relevant
# document, and q2 has none at grade 2 or above.
FIXTURE_QRELS = """\
q1 0 D2 2
q1 0 D5 0
q1 0 D8 1
q1 0 D9 0
q1 0 D10 3
q1 0 D13 2
q1 0 D18 0
q1 0 D19 1
q1 0 D22 3
q1 0 D30 2
q2 0 p1 1
q2 0 p2 1
q2 0 n1 0
q3 0 d1 1
q5 0 e1 0
q5 0 e2 0
q6 0 r1 2
q6 0 s1 0
"""


def _fixture_run() -> str:
    lines = []
    # q1: ranks 1-7 distinct, D8-D13 tied across the cut-off 10, D18-D23 tied across 20, the rest below.
    q1 = {f"D{i}": 20.0 - i for i in range(1, 8)}
    q1.update({f"D{i}": 3.0 for i in range(8, 14)})
    q1.update({f"D{i}": 2.0 - i / 100 for i in range(14, 18)})
    q1.update({f"D{i}": 1.0 for i in range(18, 24)})
    q1.update({f"D{i}": 0.5 - i / 100 for i in range(24, 28)})
    q2 = {"n1": 2.0, "p1": 1.0, "z9": 1.0, "m4": 1.0, "p2": 0.5}
    q4 = {"x1": 1.0, "x2": 1.0}
    q5 = {"e1": 1.0, "e3": 0.9}
    # q6: the relevant r1 ties with s1 at ranks 10-11; trec_eval puts s1 first, so RR@10 is 0 and RR is 1/11.
    q6 = {f"u{i}": 10.0 - i for i in range(1, 10)} | {"r1": 0.1, "s1": 0.1}
    for qid, scores in [("q1", q1), ("q2", q2), ("q4", q4), ("q5", q5), ("q6", q6)]:
        for rank, (doc, score) in enumerate(sorted(scores.items()), start=1):  # file order: doc id ascending
            lines.append(f"{qid} Q0 {doc} {rank} {score:g} tag")
    return "\n".join(lines) + "\n"


FIXTURE_RUN = _fixture_run()
FIXTURE_METRICS = ["nDCG@10", "nDCG@20", "P@20", "AP", "RR", "RR@10", "R@100", "Judged@10"]
PYTREC_NAMES = {"nDCG@10": "ndcg_cut_10", "nDCG@20": "ndcg_cut_20", "P@20": "P_20", "AP": "map",
                "RR": "recip_rank", "R@100": "recall_100"}


def write_fixture(directory) -> tuple:
    """The fixture as TREC files: `(qrels path, run path)`."""
    paths = directory / "qrels.txt", directory / "a.run"
    for path, text in zip(paths, (FIXTURE_QRELS, FIXTURE_RUN)):
        path.write_text(text)
    return paths


def trec_eval_ranking(scores: dict) -> list:
    """trec_eval's order: score descending, then document id descending (as strings)."""
    return sorted(scores, key=lambda doc: (scores[doc], doc), reverse=True)


def expected_values(qrels_text: str, run_text: str, rel_level: int) -> dict:
    """`{(qid, metric): value}` from pytrec_eval on the raw run, and by hand where it has no such measure."""
    import pytrec_eval

    # pytrec_eval's own readers, so the reference does not depend on posbias.io
    qrels, run = pytrec_eval.parse_qrel(io.StringIO(qrels_text)), pytrec_eval.parse_run(io.StringIO(run_text))
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10,20", "P.20", "map", "recip_rank", "recall.100"},
                                               relevance_level=rel_level)
    expected = {}
    for qid, values in evaluator.evaluate(run).items():
        expected.update({(qid, name): values[measure] for name, measure in PYTREC_NAMES.items()})
        top10 = trec_eval_ranking(run[qid])[:10]
        ranks = [rank for rank, doc in enumerate(top10, start=1) if qrels[qid].get(doc, 0) >= rel_level]
        expected[(qid, "RR@10")] = 1 / ranks[0] if ranks else 0.0
        expected[(qid, "Judged@10")] = sum(doc in qrels[qid] for doc in top10) / len(top10)
    return expected


@pytest.mark.parametrize("rel_level", [1, 2])
def test_every_metric_matches_trec_eval_per_query(tmp_path, rel_level):
    from posbias.io import read_qrels, read_run

    qrels_path, run_path = write_fixture(tmp_path)
    qrels, run = read_qrels(qrels_path), read_run(run_path)
    expected = expected_values(FIXTURE_QRELS, FIXTURE_RUN, rel_level)
    frame = per_query(qrels, run, FIXTURE_METRICS, rel_level=rel_level)

    # judged and in the run: q3 (not run) and q4 (not judged) are skipped, q5 (nothing relevant) is kept
    assert set(frame.qid) == set(qrels) & set(run) == {"q1", "q2", "q5", "q6"}
    assert {qid for qid, _ in expected} == set(frame.qid)  # pytrec_eval evaluates the same queries
    assert sorted(frame.metric.unique()) == sorted(FIXTURE_METRICS)  # names as written, never "RR(rel=2)@10"
    assert len(frame) == len(expected)
    for row in frame.itertuples():
        assert row.value == pytest.approx(expected[(row.qid, row.metric)], abs=1e-9), (row.qid, row.metric)


def test_fixture_exercises_ties_and_rel_level():
    """Guards the fixture itself: the tie order and --rel-level must change values, or the test above proves little."""
    import pytrec_eval

    run = pytrec_eval.parse_run(io.StringIO(FIXTURE_RUN))
    level1, level2 = expected_values(FIXTURE_QRELS, FIXTURE_RUN, 1), expected_values(FIXTURE_QRELS, FIXTURE_RUN, 2)
    assert trec_eval_ranking(run["q1"])[7:13] == ["D9", "D8", "D13", "D12", "D11", "D10"]
    assert level1[("q6", "RR@10")] == 0.0 and level1[("q6", "RR")] == pytest.approx(1 / 11)
    assert level1[("q2", "AP")] > 0 and level2[("q2", "AP")] == 0.0
    assert level1[("q1", "P@20")] != level2[("q1", "P@20")]
    assert level1[("q1", "nDCG@10")] == level2[("q1", "nDCG@10")]  # graded gains: -l does not change nDCG


def test_rel_level_applies_to_threshold_measures_only():
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": {"a": 2.0, "b": 1.0, "c": 0.5}}
    frame = per_query(qrels, run, ["RR@10", "SetP", "Bpref", "NumRet", "NumRelRet", "AP(rel=1)", "nDCG@10"],
                      rel_level=2)
    assert value(frame, "q", "RR@10") == pytest.approx(1 / 2)
    assert value(frame, "q", "SetP") == pytest.approx(1 / 3)
    assert value(frame, "q", "NumRet") == 3  # all retrieved documents, whatever the level
    assert value(frame, "q", "NumRelRet") == 1
    assert value(frame, "q", "AP(rel=1)") == pytest.approx(1.0)  # an explicit rel is kept
    assert value(frame, "q", "Bpref") == pytest.approx(0.0)  # a judged grade-1 document above it is non-relevant
