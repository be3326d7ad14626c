"""The Judging-the-Judges release read from files written here in its own layout: a record TSV, a tmp.pkl, a log."""

import pickle
from pathlib import Path

import pandas as pd
import pytest

from posbias.errors import InputError
from posbias.judges import release, reproduction

ANSWERS = {  # cmp_index -> the judge's answer (MT-Bench: the [[X]] tag; vicuna-13b-v1.3 is the reference)
    "81;vicuna-13b-v1.3;alpaca-13b": "Assistant A is better. [[A]]",
    "81;alpaca-13b;vicuna-13b-v1.3": "Assistant B is better. [[B]]",  # consistent: vicuna both times
    "82;vicuna-13b-v1.3;alpaca-13b": "[[A]]",
    "82;alpaca-13b;vicuna-13b-v1.3": "[[A]] then [[B]]",  # the first tag counts: primacy
    "83;vicuna-13b-v1.3;alpaca-13b": "no verdict",  # unread: its twin counts as consistent in the log's figure
    "83;alpaca-13b;vicuna-13b-v1.3": "[[C]]",
    "84;vicuna-13b-v1.3;alpaca-13b": "EM",  # identical answers, never judged
}


def write_release(root, as_pickle: bool):
    run = root / "judgment_data" / "data_MTBench_position_bias" / "MTBench_data_infer_input_2680_record0_judge-x_3"
    run.mkdir(parents=True)
    if as_pickle:
        (run / "tmp.pkl").write_bytes(pickle.dumps(dict(ANSWERS)))
    else:
        pd.DataFrame({"cmp_index": list(ANSWERS), "task": "writing", "judge-x": list(ANSWERS.values())}).to_csv(
            run / "record_judge-x_3.tsv", sep="\t", index=False)
    (run / "log.txt").write_text("Extracted 5 answers from the responses (extraction success rate 83.33%)\n"
                                 "3 out of 5 answers are consistent. (A vs. B <-> B vs. A) The consistent rate is "
                                 "60.00%\n")
    return run


@pytest.mark.parametrize("as_pickle", [False, True])
def test_a_run_read_as_judgments(tmp_path, as_pickle):
    write_release(tmp_path, as_pickle)
    (run,) = release.runs(tmp_path)
    assert (run.benchmark, run.set, run.judge, run.repetition) == ("MTBench", "position_bias", "judge-x", 0)
    found = release.judgments(run)
    assert len(found) == 6  # the exact match left out
    by_index = {(j.question, j.first): j for j in found}
    assert by_index[("81", "alpaca-13b")].subject == "alpaca-13b"
    assert by_index[("82", "alpaca-13b")].choice == "first"
    assert by_index[("83", "vicuna-13b-v1.3")].choice is None
    assert by_index[("83", "alpaca-13b")].choice == "tie"
    assert by_index[("81", "vicuna-13b-v1.3")].task == ("" if as_pickle else "writing")
    # the log's figure, counted as the authors' pipeline counts it: 81 twice, 83's tie (twin unread)
    assert release.released_consistent_answers(found) == (3, 5) == release.printed_consistency(run)


def write_question_table(root, columns=("index", "task")):
    table = root / "QA_data" / "full_data" / "MTBench"
    table.mkdir(parents=True)
    rows = {"index": [81, 82, 83, 84], "task": ["writing", "writing", "math", "math"], "question_1": ["..."] * 4}
    pd.DataFrame({column: rows[column] for column in (*columns, "question_1")}).to_excel(table / "MTBench_data.xlsx",
                                                                                         index=False)


def test_a_pickled_run_takes_its_tasks_from_the_question_table(tmp_path):
    write_release(tmp_path, as_pickle=True)
    write_question_table(tmp_path)
    tasks = release.question_tasks(tmp_path, "MTBench")
    assert tasks == {"81": "writing", "82": "writing", "83": "math", "84": "math"}
    found = release.judgments(next(release.runs(tmp_path)), tasks)
    assert {(j.question, j.task) for j in found} == {("81", "writing"), ("82", "writing"), ("83", "math")}
    assert release.question_tasks(tmp_path / "judgment_data", "MTBench") == tasks  # judgment_data/ given works too


def test_a_record_tsv_s_own_task_wins_over_the_question_table(tmp_path):
    write_release(tmp_path, as_pickle=False)  # every comparison's task "writing" in the TSV
    found = release.judgments(next(release.runs(tmp_path)), {"81": "math", "82": "math", "83": "math"})
    assert {j.task for j in found} == {"writing"}


def test_a_question_missing_from_the_table_is_logged(tmp_path, caplog):
    write_release(tmp_path, as_pickle=True)
    found = release.judgments(next(release.runs(tmp_path)), {"81": "writing"})
    assert {j.question for j in found if not j.task} == {"82", "83"}
    assert "2 questions in no question table (e.g. 82)" in caplog.text


def test_a_comparison_without_the_reference_is_refused(tmp_path):
    run = write_release(tmp_path, as_pickle=True)
    (run / "tmp.pkl").write_bytes(pickle.dumps({"81;alpaca-13b;koala-13b": "[[A]]"}))
    with pytest.raises(InputError, match="'81;alpaca-13b;koala-13b' does not compare with the reference"):
        release.judgments(next(release.runs(tmp_path)))


def test_a_release_without_its_question_table_gives_no_tasks(tmp_path, caplog):
    write_release(tmp_path, as_pickle=True)
    assert release.question_tasks(tmp_path, "MTBench") == {}
    assert "no QA_data/full_data/MTBench/*.xlsx" in caplog.text


def test_a_question_table_without_tasks_is_one_error(tmp_path):
    write_question_table(tmp_path, columns=("index",))
    with pytest.raises(InputError, match=r"MTBench_data.xlsx: expected columns index and task"):
        release.question_tasks(tmp_path, "MTBench")


def test_a_question_table_without_openpyxl_is_one_error_naming_the_extra(tmp_path, monkeypatch):
    write_question_table(tmp_path)

    def without_openpyxl(*args, **kwargs):
        raise ImportError("Missing optional dependency 'openpyxl'")

    monkeypatch.setattr(pd, "read_excel", without_openpyxl)
    with pytest.raises(InputError, match=r"MTBench_data.xlsx: reading .* needs openpyxl: "
                                         r"pip install 'posbias\[judges\]'"):
        release.question_tasks(tmp_path, "MTBench")


def test_a_pickle_with_objects_is_refused(tmp_path):
    run = write_release(tmp_path, as_pickle=True)
    (run / "tmp.pkl").write_bytes(pickle.dumps({"x": pd.Timestamp(0)}))
    with pytest.raises(InputError, match="only plain dicts"):
        release.answers(next(release.runs(tmp_path)))


def test_convert_and_reproduce(tmp_path):
    write_release(tmp_path / "release", as_pickle=False)
    written, missing = reproduction.convert(tmp_path / "release", tmp_path / "records")
    assert written == {"mtbench-position-bias.jsonl.gz": 6} and missing == []
    reference = tmp_path / "reference.yaml"
    reference.write_text("printed:\n- {benchmark: MTBench, set: position_bias, judge: judge-x, repetition: 0, "
                         "consistent: 3, read: 5}\n")
    (row,) = reproduction.reproduction_rows(tmp_path / "records", reference, n_resamples=20)
    assert row["match"] is True and row["reproduced"] == row["printed"] == "3/5 (60.00%)"
    paths = reproduction.write_reproduction([row], tmp_path / "out" / "reproduction")
    assert "1 of the 1 figures" in paths[-1].read_text()


PRINTED = ("printed:\n- {benchmark: MTBench, set: position_bias, judge: judge-x, repetition: 0, consistent: 3, "
           "read: 5}\n")


def converted(tmp_path):
    write_release(tmp_path / "release", as_pickle=False)
    reproduction.convert(tmp_path / "release", tmp_path / "records")
    (tmp_path / "records" / "devbench-position-bias.jsonl.gz").write_bytes(  # no DevBench judge in this release
        (tmp_path / "records" / "mtbench-position-bias.jsonl.gz").read_bytes())
    return tmp_path / "records"


@pytest.mark.parametrize("typed, within", [(0.5, True), (0.54, True), (0.56, False)])
def test_a_paper_figure_is_checked_within_its_rounding(tmp_path, typed, within):
    # judge-x: 81 consistent, 82 primacy, 83 unread -> PC 1/2 as the authors aggregate
    reference = tmp_path / "reference.yaml"
    reference.write_text(PRINTED + f"paper:\n- {{benchmark: MTBench, judge: judge-x, position_consistency: {typed}, "
                                   f"rounding: 0.1, source: 'a table'}}\n- {{benchmark: MTBench, judge: judge-y, "
                                   f"preference_fairness: 0.1, rounding: 0.01, source: 'a table'}}\n")
    rows = reproduction.cell_average_rows(converted(tmp_path), reference)
    by_judge = {(row["benchmark"], row["judge"]): row for row in rows}
    assert by_judge[("MTBench", "judge-x")]["position_consistency"] == 0.5
    assert by_judge[("MTBench", "judge-x")]["pc_within_rounding"] is within
    assert "pf_within_rounding" not in by_judge[("MTBench", "judge-x")]  # the row gives no PF
    assert "position_consistency" not in by_judge[("MTBench", "judge-y")]  # typed, but not in the records
    paths = reproduction.write_reproduction(reproduction.reproduction_rows(tmp_path / "records", reference, 20),
                                            tmp_path / "out" / "reproduction", rows)
    assert [path.name for path in paths] == ["reproduction.csv", "reproduction.averages.csv", "reproduction.md"]
    page = paths[2].read_text()
    assert f"{int(within)} of the 1 paper figures that the released judgments let us recompute, of 2 typed in" in page
    assert f"| {typed:g} ({'yes' if within else '**no**'})" in page


@pytest.mark.parametrize("row, message", [
    ("{benchmark: MTBench, judge: judge-x, position_consistency: 0.5, source: s}", r"paper\[0\] lacks rounding"),
    ("{benchmark: AlpacaEval, judge: judge-x, rounding: 0.01, source: s}", r"paper\[0\].benchmark 'AlpacaEval'"),
    ("{benchmark: MTBench, judge: judge-x, rounding: 1, source: s}", r"paper\[0\].rounding must be"),
    ("{benchmark: MTBench, judge: judge-x, rounding: 0.01, source: s, position_consistency: high}",
     r"paper\[0\].position_consistency must be a number"),
    ("{benchmark: MTBench, judge: judge-x, rounding: 0.01, source: s, position_consistency: true}",
     r"paper\[0\].position_consistency must be a number"),
    ("{benchmark: MTBench, judge: judge-x, rounding: 0.01, source: s, position_consistncy: 0.5}",
     r"paper\[0\] has unknown keys position_consistncy"),
    ("{benchmark: MTBench, judge: judge-x, rounding: 0.01, source: s}", r"gives neither position_consistency"),
    ("{benchmark: MTBench, judge: judge-x, rounding: 0.01, source: '', position_consistency: 0.5}",
     r"paper\[0\].source must be a non-empty string"),
    ("{benchmark: MTBench, judge: judge-x, rounding: 0.01, source: s, position_consistency: 0.5}\n"
     "- {benchmark: MTBench, judge: judge-x, rounding: 0.01, source: t, preference_fairness: 0.1}",
     r"paper\[1\] repeats MTBench judge-x"),
])
def test_a_malformed_paper_row_is_one_error(tmp_path, row, message):
    reference = tmp_path / "reference.yaml"
    reference.write_text(PRINTED + f"paper:\n- {row}\n")
    with pytest.raises(InputError, match=message):
        reproduction.cell_average_rows(converted(tmp_path), reference)


def test_the_shipped_records_aggregate_every_position_bias_judge():
    reference = Path(__file__).resolve().parents[2] / reproduction.REFERENCE
    rows = reproduction.cell_average_rows(reproduction.RELEASED, reference)
    assert [(row["benchmark"], row["n_cells"]) for row in rows] == [("MTBench", 240)] * 3 + [("DevBench", 140)] * 5
    pooled = {(row["benchmark"], row["judge"]): row["position_consistency"]
              for row in reproduction.reproduction_rows(reproduction.RELEASED, reference, 20)
              if row["set"] == "position_bias" and row["match"] is not None}
    for row in rows:  # no verdict of "neither" in the release: the pooled PC is the authors' PC
        assert row["position_consistency"] == pytest.approx(pooled[(row["benchmark"], row["judge"])])
    # GPT-4-0613 on MT-Bench as the authors' released analysis gives it on the same answers (run once on a clone of
    # the release: benchmarks/judges_authors_code_check.py); its spread and PF depend on the tasks the question
    # table gave the pickled run
    gpt4 = next(row for row in rows if (row["benchmark"], row["judge"]) == ("MTBench", "gpt-4-0613"))
    assert [round(gpt4[key], 4) for key in ("position_consistency", "position_consistency_std", "preference_fairness",
                                            "preference_fairness_std")] == [0.8154, 0.1493, 0.0196, 0.1408]


def test_the_shipped_records_reproduce_every_printed_figure_they_hold():
    reference = Path(__file__).resolve().parents[2] / reproduction.REFERENCE
    rows = reproduction.reproduction_rows(reproduction.RELEASED, reference, n_resamples=20)
    checked = [row for row in rows if row["match"] is not None]
    assert len(rows) == 72 and len(checked) == 62
    assert all(row["match"] for row in checked)
