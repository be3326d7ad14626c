import os

import pytest

from posbias.io import FormatError, read_folds, read_run, write_folds, write_run
from posbias.training import steps as cross_validation
from posbias.training.jobs import CheckpointFoldsJob, CrossValidatedSet, FoldJob, Recipe, TrainingSet
from posbias.training.steps import merge_fold_runs


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


class Folds:
    """A stand-in for fine-tuning and reranking one fold: each held-out query's candidates scored by a rule, every
    fold it ran recorded, and a chosen fold that stops the job the first time (a time limit, a pre-emption)."""

    def __init__(self, stop_at: int | None = None):
        self.ran, self.stop_at = [], stop_at

    def __call__(self, job: FoldJob):
        if job.fold == self.stop_at:
            self.stop_at = None
            raise KeyboardInterrupt("stopped")
        self.ran.append((job.inputs.queries, job.fold))
        held_out = {q for q, f in read_folds(job.folds).items() if f == job.fold}
        write_run(job.run, {q: {d: float(len(d) + job.fold) for d in docs}
                            for q, docs in read_run(job.inputs.candidates).items() if q in held_out}, tag=job.tag)


@pytest.fixture
def two_querysets(tmp_path):
    querysets = []
    for name in ("title", "desc"):
        write_folds(tmp_path / f"{name}.folds", {"q1": 1, "q2": 2, "q3": 3})
        write_run(tmp_path / f"{name}.cand", {q: {"d1": 1.0, "doc22": 0.5} for q in ("q1", "q2", "q3")}, tag="bm25")
        for kind in ("tokens", "queries", "qrels"):
            (tmp_path / f"{name}.{kind}").write_text(kind)
        querysets.append({"tokens": str(tmp_path / f"{name}.tokens"), "queries": str(tmp_path / f"{name}.queries"),
                          "qrels": str(tmp_path / f"{name}.qrels"), "candidates": str(tmp_path / f"{name}.cand"),
                          "folds": str(tmp_path / f"{name}.folds"), "run": str(tmp_path / "runs" / f"{name}.run")})
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "model.safetensors").write_text("weights")
    return querysets


def run_checkpoint(tmp_path, querysets, **changes):
    job = {"model": {"ranker": "maxp"}, "training": {"epochs": 1}, "seed": 1, "tag": "maxp-seed1",
           "scoring": {"batch_size": 2}, **changes}
    sets = [CrossValidatedSet(TrainingSet(q["tokens"], q["queries"], q["qrels"], q["candidates"]), q["folds"], q["run"])
            for q in querysets]
    cross_validation.cross_validate_checkpoint(CheckpointFoldsJob(
        Recipe(job["model"], job["training"], job["seed"]), str(tmp_path / "ckpt"), sets, tag=job["tag"],
        scoring=job["scoring"], threads=1))


def test_a_checkpoints_job_runs_every_fold_of_every_queryset_and_merges_them(tmp_path, two_querysets, monkeypatch):
    folds = Folds()
    monkeypatch.setattr(cross_validation, "cross_validate_fold", folds)
    run_checkpoint(tmp_path, two_querysets)
    assert [fold for _, fold in folds.ran] == [1, 2, 3, 1, 2, 3]
    for files in two_querysets:
        assert read_run(files["run"]) == {q: {"d1": 2.0 + f, "doc22": 5.0 + f} for q, f in (("q1", 1), ("q2", 2),
                                                                                          ("q3", 3))}
    assert not (tmp_path / "runs" / "title.run.resume").exists()  # the folds' runs are not kept


def test_a_stopped_job_goes_on_with_the_next_fold_and_gives_the_same_runs(tmp_path, two_querysets, monkeypatch):
    monkeypatch.setattr(cross_validation, "cross_validate_fold", Folds())
    run_checkpoint(tmp_path, two_querysets)
    whole = [open(files["run"]).read() for files in two_querysets]
    for files in two_querysets:
        os.remove(files["run"])
    stopped = Folds(stop_at=2)
    monkeypatch.setattr(cross_validation, "cross_validate_fold", stopped)
    with pytest.raises(KeyboardInterrupt):
        run_checkpoint(tmp_path, two_querysets)  # the title set's second fold is cut off
    run_checkpoint(tmp_path, two_querysets)
    assert stopped.ran == [(two_querysets[0]["queries"], 1), (two_querysets[0]["queries"], 2),
                           (two_querysets[0]["queries"], 3), *((two_querysets[1]["queries"], f) for f in (1, 2, 3))]
    assert [open(files["run"]).read() for files in two_querysets] == whole


@pytest.mark.parametrize("change", ["an input rewritten", "another seed"])
def test_a_fold_kept_from_other_inputs_or_settings_is_run_again(tmp_path, two_querysets, monkeypatch, change):
    stopped = Folds(stop_at=3)
    monkeypatch.setattr(cross_validation, "cross_validate_fold", stopped)
    with pytest.raises(KeyboardInterrupt):
        run_checkpoint(tmp_path, two_querysets)  # folds 1 and 2 of the title set are kept
    if change == "an input rewritten":
        (tmp_path / "title.qrels").write_text("qrels, judged again")
        run_checkpoint(tmp_path, two_querysets)
    else:
        run_checkpoint(tmp_path, two_querysets, seed=2)
    assert [fold for _, fold in stopped.ran] == [1, 2, 1, 2, 3, 1, 2, 3]
