import pytest

from posbias.io import FormatError, read_folds, read_run, write_folds, write_run
from posbias.steps.cross_validation import merge_fold_runs


def test_merge_joins_each_folds_own_queries(tmp_path):
    write_folds(tmp_path / "folds.tsv", {"q1": 1, "q2": 2, "q3": 2})
    write_run(tmp_path / "f1.run", {"q1": {"d1": 1.0}}, tag="t")
    write_run(tmp_path / "f2.run", {"q2": {"d2": 2.0}, "q3": {"d3": 1.0, "d1": 0.5}}, tag="t")
    merge_fold_runs([str(tmp_path / "f1.run"), str(tmp_path / "f2.run")], str(tmp_path / "folds.tsv"),
                    str(tmp_path / "all.run"), tag="maxp-seed1")
    assert read_run(tmp_path / "all.run") == {"q1": {"d1": 1.0}, "q2": {"d2": 2.0}, "q3": {"d3": 1.0, "d1": 0.5}}


def test_merge_refuses_a_query_reranked_in_the_wrong_fold(tmp_path):
    write_folds(tmp_path / "folds.tsv", {"q1": 1, "q2": 2})
    write_run(tmp_path / "f1.run", {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}, tag="t")
    write_run(tmp_path / "f2.run", {}, tag="t")
    with pytest.raises(ValueError, match=r"f1.run: query q2 belongs to fold 2, not fold 1"):
        merge_fold_runs([str(tmp_path / "f1.run"), str(tmp_path / "f2.run")], str(tmp_path / "folds.tsv"),
                        str(tmp_path / "all.run"), tag="t")
    assert not (tmp_path / "all.run").exists()


@pytest.mark.parametrize("text,message", [("q1\tone\n", "expected 'qid<TAB>fold'"),
                                          ("q1\t1\nq1\t2\n", "already in fold 1")])
def test_malformed_fold_files_name_the_line(tmp_path, text, message):
    (tmp_path / "folds.tsv").write_text(text)
    with pytest.raises(FormatError, match=message) as error:
        read_folds(tmp_path / "folds.tsv")
    assert "folds.tsv:" in str(error.value)
