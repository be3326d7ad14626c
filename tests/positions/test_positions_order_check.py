"""The chunk judge's order check (issue 32): a seeded sample of the judged chunks with two or more sentences, judged
again reversed; exact figures with the mock oracle (consistent by construction), the mock `order_biased` (it flips
exactly the chunks the oracle calls relevant) and scripted answers; the pairs file, the summary, the judges table
and the config errors."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
import yaml

from posbias.config import ConfigError, prepare
from posbias.io import write_documents, write_qrels, write_queries
from posbias.positions import order_check, steps, umbrela
from posbias.positions.jobs import DenseJob, Judge, QuerySetFiles, ReportJob, SetOutputs
from posbias.positions.paths import judges_paths, report_paths

A1, A2 = "the capital of freedonia is fredville.", "the river of sylvania is blue."
F1, F2, F3 = "it rains a lot there.", "lorem ipsum dolor sit amet elit.", "sed do eiusmod tempor."
LONG = "one two three four five six seven eight nine ten eleven twelve."
# chunks of at most 16 whitespace tokens: d1 -> [A1 F1] (relevant) [F2 F3]; d2 -> [F2 A2] (relevant);
# d3 -> [F1 F3 F2]; d4 -> [LONG] (one sentence: it cannot be reordered)
DOCS = [{"id": "d1", "text": f"{A1} {F1} {F2} {F3}"}, {"id": "d2", "text": f"{F2} {A2}"},
        {"id": "d3", "text": f"{F1} {F3} {F2}"}, {"id": "d4", "text": LONG}]
ELIGIBLE = {("q1", "d1", 0): True, ("q1", "d1", 1): False, ("q2", "d2", 0): True, ("q2", "d3", 0): False}
SETTINGS = {"tokenizer": "whitespace", "bin_tokens": 16, "max_bin": 4,
            "dense": {"judge": "oracle", "chunk_tokens": 16, "max_chunks": 8, "length_slack": 2, "max_new_tokens": 8,
                      "consistency": {"sample": 10, "seed": 0, "judges": ["biased"]}}}
ORACLE, BIASED = {"backend": "mock", "model": "oracle"}, {"backend": "mock", "model": "order_biased"}


@pytest.fixture()
def files(tmp_path):
    write_documents(tmp_path / "docs.jsonl", DOCS)
    write_queries(tmp_path / "queries.tsv", {"q1": "capital of freedonia", "q2": "river of sylvania"})
    write_qrels(tmp_path / "qrels.txt", {"q1": {"d1": 1, "d4": 1}, "q2": {"d2": 2, "d3": 1}})
    write_documents(tmp_path / "passages.jsonl", [{"id": "p1", "text": A1}, {"id": "p2", "text": A2}])
    write_qrels(tmp_path / "passage_qrels.txt", {"q1": {"p1": 1}, "q2": {"p2": 1}})
    return tmp_path


def locate(files, settings=SETTINGS, judge=ORACLE, judge_name="oracle", others=None, name="test"):
    out = files / "out"
    outputs = SetOutputs(str(out / f"{name}.tsv"), str(out / f"{name}.json"), str(out / f"{name}.judgments.parquet"),
                         str(out / f"{name}.consistency.parquet"))
    steps.dense(DenseJob({"kind": "dense", "seed": 0}, settings,
                         Judge(judge, judge_name, {"dir": str(files / "cache"), "mode": "read_write"}),
                         QuerySetFiles(str(files / "docs.jsonl"), str(files / "queries.tsv"), str(files / "qrels.txt")),
                         outputs, passages=str(files / "passages.jsonl"),
                         passage_qrels=str(files / "passage_qrels.txt"),
                         order_judges={"biased": BIASED} if others is None else others))
    return json.loads((out / f"{name}.json").read_text()), pd.read_parquet(out / f"{name}.consistency.parquet")


def test_reversing_moves_the_first_sentence_last_and_leaves_one_sentence_alone():
    assert order_check.reverse(f"{A1} {F1} {F2}") == (3, f"{F2} {F1} {A1}")
    assert order_check.reverse(LONG) == (1, LONG)


def chunks(texts):
    return [order_check.Chunk("q", "d", i, "query", text, {"order": "original"}) for i, text in enumerate(texts)]


def test_the_sample_is_seeded_and_drawn_from_chunks_of_two_or_more_sentences_in_judged_order():
    judged = chunks([f"{A1} {F1}", LONG, f"{F2} {F3}", f"{F1} {A2}", LONG, f"{F3} {F1} {F2}"])
    sample, eligible = order_check.draw(judged, 2, seed=7)
    expected = [[0, 2, 3, 5][i] for i in sorted(np.random.default_rng(7).choice(4, size=2, replace=False))]
    assert eligible == 4 and [s.index for s in sample] == expected
    assert [s.index for s in order_check.draw(judged, 2, seed=7)[0]] == expected  # the same draw again
    assert [s.index for s in order_check.draw(judged, 50, seed=0)[0]] == [0, 2, 3, 5]  # fewer than asked: all
    assert order_check.draw(judged, 0, seed=0) == ([], 4)  # off
    assert order_check.draw(chunks([LONG]), 5, seed=0) == ([], 0)


def test_a_reversed_request_has_the_same_query_and_prompt_and_keeps_the_oracles_answer():
    judged = [order_check.Chunk("q1", "d1", 0, "capital of freedonia", f"{F1} {A1}",
                                {"order": "original", "answer": "##final score: 3"})]
    sample, _ = order_check.draw(judged, 1, seed=0)
    (prompt, meta), = order_check.requests(sample, order_check.REVERSED)
    assert prompt == umbrela.prompt("capital of freedonia", f"{A1} {F1}")
    assert meta == {"order": "reversed", "answer": "##final score: 3"}
    assert order_check.requests(sample, "original")[0] == (umbrela.prompt("capital of freedonia", f"{F1} {A1}"),
                                                           {"order": "original", "answer": "##final score: 3"})


def test_the_figures_of_scripted_answers_are_exact():
    sample, _ = order_check.draw(chunks([f"{A1} {F1}"] * 6), 6, seed=0)
    as_written = ["##final score: 3", "##final score: 2", "##final score: 0", "nonsense", "##final score: 1", "?"]
    reversed_ = ["##final score: 3", "##final score: 0", "##final score: 0", "##final score: 2", "I cannot say", "!"]
    pairs = order_check.pairs("scripted", sample, as_written, reversed_)
    assert pairs["grade_original"].tolist() == [3, 2, 0, pd.NA, 1, pd.NA]
    found = order_check.summary(pairs, eligible=9)
    # the last chunk has no grade in either order: left out of the decisions. The other 5, relevant (grade >= 1;
    # unparseable: not) as written T T F F T, reversed T F F T F: 2 alike, 2 lost, 1 gained
    assert (found["sampled"], found["n"], found["eligible"], found["no_grade"]) == (6, 5, 9, 1)
    assert (found["agree"], found["only_original"], found["only_reordered"]) == (2, 2, 1)
    assert found["mcnemar_p"] == pytest.approx(1.0)  # 2 against 1 in one document's chunks: its net +1 alone
    assert found["clusters"] == 1 and found["test"] == "clustered sign-flip over 1 cluster"
    assert (found["graded"], found["same_grade"], found["grade_agreement"]) == (3, 2, pytest.approx(2 / 3))
    assert (found["same_answer"], found["answer_agreement"], found["unparseable"]) == (2, pytest.approx(2 / 6), 3)


def test_the_chunks_of_one_document_and_query_are_one_cluster():
    # 4 chunks of document d for query q lose their relevance reversed, 2 of d2 for q too, 1 of d for q2: the exact
    # McNemar test would count 7 independent flips (2 / 2**7); they are 3 (document, query) clusters: 2 / 2**3.
    judged = [order_check.Chunk(q, d, i, "query", f"{A1} {F1}", {}) for i, (q, d) in enumerate(
        [("q", "d")] * 4 + [("q", "d2")] * 2 + [("q2", "d")])]
    sample, _ = order_check.draw(judged, 7, seed=0)
    found = order_check.summary(order_check.pairs("biased", sample, ["##final score: 2"] * 7, ["##final score: 0"] * 7),
                                eligible=7)
    assert (found["n"], found["only_original"], found["only_reordered"], found["clusters"]) == (7, 7, 0, 3)
    assert found["mcnemar_p"] == pytest.approx(2 / 2 ** 3)


def test_a_judge_that_never_grades_has_no_decision_to_compare():
    sample, _ = order_check.draw(chunks([f"{A1} {F1}"] * 3), 3, seed=0)
    found = order_check.summary(order_check.pairs("mute", sample, ["1. Measure", "x", "y"], ["1. Measure", "z", "y"]),
                                eligible=3)
    assert (found["n"], found["agreement"], found["no_grade"], found["unparseable"]) == (0, None, 3, 3)
    assert (found["same_answer"], found["graded"], found["grade_agreement"]) == (2, 0, None)


def test_the_oracle_is_consistent_and_order_biased_flips_exactly_the_relevant_chunks(files):
    summary, pairs = locate(files)
    oracle, biased = summary["consistency"]["oracle"], summary["consistency"]["biased"]
    assert (oracle["n"], oracle["eligible"], oracle["agreement"], oracle["mcnemar_p"]) == (4, 4, 1.0, None)
    assert oracle["positive_original"] == oracle["positive_reordered"] == 2  # d1's and d2's first chunks
    assert oracle["calls"] == 4  # the set's judge keeps its verdicts as written: only the reversed are asked
    # order_biased: the oracle as written, grade 0 reversed: the 2 relevant chunks flip, the 2 others stay 0
    assert (biased["agree"], biased["only_original"], biased["only_reordered"]) == (2, 2, 0)
    assert biased["mcnemar_p"] == pytest.approx(2 / 2 ** 2) and biased["calls"] == 8  # 2 of 3 documents flip
    assert biased["clusters"] == 3  # (q1, d1) with 2 chunks, (q2, d2), (q2, d3)
    assert (biased["same_grade"], biased["graded"], biased["same_answer"]) == (2, 4, 0)  # "0" is not "##final ..."
    by_chunk = pairs[pairs["judge"] == "biased"].set_index(["qid", "doc_id", "chunk"])
    assert {k: v >= 1 for k, v in by_chunk["grade_original"].items()} == ELIGIBLE
    assert set(by_chunk["grade_reversed"]) == {0} and len(pairs) == 8
    assert (pairs[pairs["judge"] == "oracle"]["grade_original"]
            == pairs[pairs["judge"] == "oracle"]["grade_reversed"]).all()
    again, _ = locate(files)  # every answer replayed from the response cache
    assert again["consistency"]["biased"]["cache_hits"] == 8 and again["consistency"]["oracle"]["cache_hits"] == 4


def test_a_biased_set_judge_is_checked_against_its_own_verdicts(files):
    settings = {**SETTINGS, "dense": {**SETTINGS["dense"], "consistency": {"sample": 3, "seed": 1, "judges": []}}}
    summary, pairs = locate(files, settings, judge=BIASED, judge_name="biased", others={})
    assert list(summary["consistency"]) == ["biased"] and len(pairs) == 3
    found = summary["consistency"]["biased"]
    relevant = sum(ELIGIBLE[key] for key in zip(pairs["qid"], pairs["doc_id"], pairs["chunk"]))
    assert (found["only_original"], found["only_reordered"], found["agree"]) == (relevant, 0, 3 - relevant)
    judgments = pd.read_parquet(files / "out" / "test.judgments.parquet").set_index(["qid", "doc_id", "chunk"])
    assert [judgments.loc[key, "answer"] for key in zip(pairs["qid"], pairs["doc_id"], pairs["chunk"])] == \
        pairs["answer_original"].tolist()  # its verdicts as written are the set's


def test_the_check_is_off_with_sample_0(files):
    settings = {**SETTINGS, "dense": {**SETTINGS["dense"], "consistency": {"sample": 0, "seed": 0, "judges": []}}}
    summary, pairs = locate(files, settings, others={})
    assert summary["consistency"] == {} and pairs.empty and list(pairs.columns) == list(order_check.PAIR_COLUMNS)


def test_the_tables_show_each_judges_consistency_beside_its_verdicts(files):
    locate(files)
    out = files / "out"
    tables, figures, agreement = report_paths(str(out / "report"))
    judges = judges_paths(str(out / "report"))
    steps.report(report_job(out, tables, figures, agreement, judges))
    shares = pd.read_csv(tables["csv"])
    assert shares.loc[0, ["order_n", "order_agreement"]].tolist() == [4, 1.0]
    assert "| 100.0% [51, 100] of 4 |" in open(tables["md"]).read()
    rows = pd.read_csv(judges["csv"]).set_index("judge")
    assert rows.loc["biased", ["n", "agree", "only_original", "only_reordered"]].tolist() == [4, 2, 2, 0]
    assert rows.loc["biased", "mcnemar_p"] == pytest.approx(0.5) and pd.isna(rows.loc["oracle", "mcnemar_p"])
    text = open(judges["md"]).read()
    assert ("| Test | order-biased mock | 4 of 4 | 50.0% [15, 85] of 4 | 2 / 0 | 0.5 (3) | 50.0% of 4 | 0.0% "
            "| 0 (0 in both) |") in text
    assert "| Test | mock oracle judge | 4 of 4 | 100.0% [51, 100] of 4 | 2 / 2 | no test |" in text
    assert "mock oracle judge: a mock that answers from the generator's truth" in text
    assert "consistency is 1 by construction" in text
    # no measured time in the table: counts that took other seconds give the same bytes
    written = {fmt: open(path, "rb").read() for fmt, path in judges.items()}
    counts = json.loads((out / "test.json").read_text())
    for judged in counts["consistency"].values():
        judged["seconds"] = judged["seconds"] * 7 + 1
    (out / "test.json").write_text(json.dumps(counts))
    steps.report(report_job(out, tables, figures, agreement, judges))
    assert {fmt: open(path, "rb").read() for fmt, path in judges.items()} == written


def report_job(out, tables, figures, agreement, judges) -> ReportJob:
    return ReportJob({"test": str(out / "test.tsv")}, {"test": str(out / "test.json")}, SETTINGS, {"test": "Test"},
                     {"g": {"label": "G", "sets": ["test"]}}, ["g"], tables, figures, {}, agreement, judges,
                     {"oracle": "mock oracle judge", "biased": "order-biased mock"}, ["oracle"])


def config_with(**consistency) -> dict:
    from pathlib import Path

    config = yaml.safe_load((Path(__file__).resolve().parents[2] / "config.yaml").read_text())
    config["positions"]["dense"]["consistency"] = consistency
    config["llm"]["models"]["biased"] = {"backend": "mock", "model": "order_biased"}
    return config


@pytest.mark.parametrize("consistency, message", [
    ({"sample": -1}, "positions.dense.consistency.sample: -1 is less than the minimum of 0"),
    ({"sampel": 5}, "positions.dense.consistency.sampel: unknown key"),
    ({"judges": ["gpt"]}, "positions.dense.consistency.judges: 'gpt' is not a key of llm.models"),
])
def test_bad_order_check_settings_name_the_key(consistency, message):
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}"):
        prepare(config_with(**consistency))


def test_a_mock_that_answers_from_the_passages_needs_a_set_with_passages():
    config = config_with(judges=["biased"])
    config["positions"]["sets"]["test"].pop("passages")
    config["positions"]["dense"]["judge"] = "smollm2"
    with pytest.raises(ConfigError, match=r"^positions\.dense\.consistency\.judges: the mock 'biased' answers from "
                                          r"the relevant passages, which positions\.sets\.test lacks"):
        prepare(config)
    config["positions"]["dense"]["judge"] = "biased"
    with pytest.raises(ConfigError, match=r"^positions\.sets\.test\.passages: the mock order_biased judge"):
        prepare(config)


def test_the_job_gets_the_further_judges_specs_and_the_report_their_labels():
    section = prepare(config_with(sample=4, judges=["biased", "oracle"])).positions
    further = section.set_args("test")["order_judges"]
    assert list(further) == ["biased"] and further["biased"]["model"] == "order_biased"  # the set's judge: not twice
    report = section.report_args()
    assert report["judge_labels"] == {"biased": "biased", "oracle": "mock oracle judge"}
    assert report["oracle_judges"] == ["oracle"]
