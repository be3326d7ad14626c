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
    assert "1 of the 1 figures" in paths[1].read_text()


def test_the_shipped_records_reproduce_every_printed_figure_they_hold():
    reference = Path(__file__).resolve().parents[2] / reproduction.REFERENCE
    rows = reproduction.reproduction_rows(reproduction.RELEASED, reference, n_resamples=20)
    checked = [row for row in rows if row["match"] is not None]
    assert len(rows) == 72 and len(checked) == 62
    assert all(row["match"] for row in checked)
