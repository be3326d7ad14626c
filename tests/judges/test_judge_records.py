"""The judgment records file: read, written, and refused line by line."""

import json

import pytest

from posbias.errors import InputError
from posbias.judges.records import Judgment, judgments_by_judge, read_judgments, write_judgments


def test_round_trip(tmp_path):
    judgments = [Judgment("a", "q1", "x", "y", "x", "first", 0, "writing"),
                 Judgment("a", "q1", "y", "x", "x", None, 1)]
    path = tmp_path / "records.jsonl.gz"
    assert write_judgments(path, judgments) == 2
    assert read_judgments(path) == judgments
    assert judgments[0].subject_wins == 1 and judgments[1].subject_wins is None
    assert judgments[0].pair == judgments[1].pair == ("q1", "x", "y")


@pytest.mark.parametrize("change, message", [
    ({"choice": "A"}, "choice 'A' is not one of"), ({"subject": "z"}, "subject 'z' is neither"),
    ({"second": "x"}, "first and second are the same"), ({"repetition": -1}, "repetition must be"),
])
def test_bad_lines_name_the_file_and_line(tmp_path, change, message):
    good = {"judge": "a", "question": "q", "first": "x", "second": "y", "subject": "x", "choice": "tie"}
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, **change}) + "\n")
    with pytest.raises(InputError, match=f"records.jsonl:2: {message}"):
        read_judgments(path)


def test_several_judges_need_a_choice(tmp_path):
    path = tmp_path / "records.jsonl"
    write_judgments(path, [Judgment("a", "q", "x", "y", "x", "first"), Judgment("b", "q", "x", "y", "x", "first")])
    with pytest.raises(InputError, match="2 judges"):
        read_judgments(path)
    assert [judgment.judge for judgment in read_judgments(path, "b")] == ["b"]
    with pytest.raises(InputError, match="no judgments of judge 'c'"):
        read_judgments(path, "c")


def test_a_judgment_twice_is_refused(tmp_path):
    path = tmp_path / "records.jsonl"
    write_judgments(path, [Judgment("a", "q", "x", "y", "x", "first")] * 2)
    with pytest.raises(InputError, match="more than once"):
        read_judgments(path)


def test_every_judge_read_at_once(tmp_path):
    path = tmp_path / "j.jsonl"
    mixed = [Judgment("a", "q", "x", "y", "x", "first"), Judgment("b", "q", "x", "y", "x", "second"),
             Judgment("a", "q", "y", "x", "x", "tie")]
    write_judgments(path, mixed)
    assert judgments_by_judge(path) == {"a": [mixed[0], mixed[2]], "b": [mixed[1]]}
    write_judgments(path, mixed + [mixed[1]])
    with pytest.raises(InputError, match="judge 'b' judged question 'q'"):
        judgments_by_judge(path)
