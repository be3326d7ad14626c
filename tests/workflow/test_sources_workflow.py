"""The workflow on collections read from sources: ir_datasets (BEIR NQ, Robust04 with its folds),
local files with a given run, truncation, hybrid retrieval and cross-validation, all offline."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd
import pytest

from posbias.io import read_folds, read_run, read_queries

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data" / "sources"))
from fixtures_robust_beir import ROBUST04, ROBUST04_FOLDS, write_beir_nq, write_robust04  # noqa: E402
from snakemake_runs import run_snakemake, scheduled_jobs, write_config  # noqa: E402

pytestmark = pytest.mark.slow  # minutes: `make test` starts this file first (tests/conftest.py)

OFFLINE = "offline:all-MiniLM-L6-v2"


def sources_config(backbone: str, given_run: Path, queries: Path, qrels: Path) -> dict:
    args = dict(backbone=backbone, max_query_tokens=8, chunk_tokens=16, stride=16, max_doc_tokens=48)
    model = {"lr": 1e-4, "head_lr": 1e-3, "baseline": "firstp"}
    return {
        "collections": {
            "nq": {"documents": {"kind": "ir_datasets", "id": "beir/nq"}},
            "robust": {"documents": {"kind": "ir_datasets", "id": ROBUST04},
                       "truncate": {"tokenizer": OFFLINE, "max_tokens": 12}},
        },
        "querysets": {
            "nq_train": {"collection": "nq", "source": {"kind": "ir_datasets", "id": "beir/nq"}, "depth": 5,
                         "metrics": ["RR@10"]},
            "nq_given": {"collection": "nq", "source": {"kind": "local", "queries": str(queries),
                                                          "qrels": str(qrels)},
                         "candidates": str(given_run), "depth": 3, "metrics": ["RR"]},
            "robust_desc": {"collection": "robust", "source": {"kind": "ir_datasets", "id": ROBUST04,
                                                                "fields": ["description"]},
                            "folds": ROBUST04_FOLDS, "depth": 6, "metrics": ["nDCG@20", "AP"]},
        },
        "retrievers": {"bm25": {"kind": "bm25"},
                       "hybrid": {"kind": "hybrid", "weight": 0.3,
                                  "encoder": {"model": backbone, "pooling": "mean", "max_passage_tokens": 32}}},
        "training": {"queryset": "nq_train", "seeds": [1], "epochs": 1, "batch_size": 2,
                     "freeze_embeddings": True, "freeze_layers": 1},
        # a checkpoint's five folds in one job (two jobs instead of ten); `per_fold` makes the same runs below
        "cross_validation": {"querysets": ["robust_desc"], "jobs": "per_checkpoint",
                             "training": {"epochs": 2, "queries_per_epoch": 2}},
        "rerank": {"querysets": ["nq_given", "robust_desc"]},
        "models": {
            "firstp": {"label": "FirstP", "ranker": "firstp", **model, "args": {**args, "max_doc_tokens": 16}},
            "maxp": {"label": "MaxP", "ranker": "maxp", **model, "args": args},
            # zero-shot bi-encoders (the study's E5 rows): reranking straight from the pretrained weights
            "first_bi": {"label": "FirstP (bi-encoder)", "ranker": "biencoder", **model, "baseline": "first_bi",
                         "zero_shot": True, "args": {**args, "chunk_tokens": 16, "stride": 16, "max_doc_tokens": 16}},
            "long_bi": {"label": "LongP (bi-encoder)", "ranker": "biencoder", **model, "baseline": "first_bi",
                        "zero_shot": True, "args": {**args, "chunk_tokens": 48, "stride": 48}},
        },
        "tables": {
            "table1": {"models": ["firstp", "maxp", "first_bi", "long_bi"],
                       "columns": [{"queryset": "robust_desc", "metric": "nDCG@20"},
                                   {"queryset": "nq_given", "metric": "RR"}]},
            "first_stage": {"querysets": ["nq_train"], "retrievers": ["bm25", "hybrid"], "depth": 5},
        },
    }


@pytest.fixture(scope="module")
def sourced_run(tmp_path_factory, tiny_backbone):
    home = Path(os.environ["IR_DATASETS_HOME"])
    nq, robust = write_beir_nq(home), write_robust04(home)
    work = tmp_path_factory.mktemp("sources")
    # A user's own query set (gzipped, to exercise compressed input) with a run made elsewhere.
    qid, judged = next(iter(nq["qrels"].items()))
    other = sorted(set(nq["docs"]) - set(judged))[:3]
    queries, qrels, given = work / "mine.tsv", work / "mine.qrels", work / "given.run"
    queries.write_text(f"{qid}\t{nq['queries'][qid]}\n")
    qrels.write_text("".join(f"{qid} 0 {d} {g}\n" for d, g in judged.items()))
    given.write_text("".join(f"{qid} Q0 {d} {r} {10 - r} elsewhere\n"
                             for r, d in enumerate([*other, *judged], start=1)))
    write_config(work, sources_config(tiny_backbone, given, queries, qrels))
    result = run_snakemake(work, "-j", "2", "results/table1.tex", "results/first_stage.tex")
    return work, nq, robust, result


def test_table1_shows_every_configured_model(sourced_run):
    work, _, _, result = sourced_run
    table = pd.read_csv(work / "results/table1.csv")
    assert set(table["system"]) == {"retriever", "firstp", "maxp", "first_bi", "long_bi"}


def test_zero_shot_models_are_never_trained_and_rerank_every_query_set_once(sourced_run):
    work, _, _, result = sourced_run
    jobs = scheduled_jobs(run_snakemake(work, "-n", "-F", "results/table1.tex").stdout)
    for rule in ("train", "cross_validate_checkpoint", "rerank"):
        assert not any("model=first_bi" in w or "model=long_bi" in w for r, w in jobs if r == rule), rule
    zero_shot = sorted(w for r, w in jobs if r == "rerank_zero_shot")
    assert zero_shot == sorted(f"queryset={qs}, model={m}" for qs in ("nq_given", "robust_desc")
                               for m in ("first_bi", "long_bi"))
    assert not (work / "results/models/long_bi").exists()
    for qs in ("nq_given", "robust_desc"):  # one run per query set, cross-validated ones included
        assert sorted(p.name for p in (work / f"results/runs/{qs}/long_bi").glob("*.run")) == ["seed0.run"]
    table = pd.read_csv(work / "results/table1.csv").set_index(["system", "column"])
    assert table["value"].notna().all()
    assert "Zero-shot rankers (FirstP (bi-encoder), LongP (bi-encoder)) are never trained" in \
        (work / "results/table1.md").read_text()


def test_sources_are_written_in_the_standard_formats(sourced_run):
    work, nq, robust, _ = sourced_run
    data = work / "results/data"
    assert (data / "nq/source/docs.jsonl").read_text().count("\n") == len(nq["docs"])
    assert read_queries(data / "robust/queries/robust_desc.tsv") == {
        q: " ".join(text.split()) for q, text in robust["descriptions"].items() if q in robust["qrels"]}
    assert read_folds(data / "robust/folds/robust_desc.tsv") == robust["folds"]
    # the rankers read the truncated copy, BM25 the full documents
    assert (data / "robust/docs.truncated.jsonl").stat().st_size < (data / "robust/source/docs.jsonl").stat().st_size


def test_a_given_run_becomes_the_candidates_cut_to_depth(sourced_run):
    work, _, _, _ = sourced_run
    candidates = read_run(work / "results/candidates/given/nq_given/top3.run")
    assert [len(docs) for docs in candidates.values()] == [3]
    assert (work / "results/runs/nq_given/maxp/seed1.run").exists()


def test_first_stage_table_compares_bm25_and_hybrid(sourced_run):
    work, _, _, _ = sourced_run
    table = pd.read_csv(work / "results/first_stage.csv")
    assert set(table["system"]) == {"bm25", "hybrid"}
    hybrid = read_run(work / "results/candidates/hybrid/nq_train/top5.run")
    assert all(len(docs) == 5 for docs in hybrid.values())


def test_changing_the_cv_recipe_reruns_only_cross_validation(sourced_run):
    work, _, _, _ = sourced_run
    import yaml

    config = yaml.safe_load((work / "config.yaml").read_text())
    config["cross_validation"]["training"]["epochs"] = 3
    other = work / "cv.yaml"
    other.write_text(yaml.safe_dump(config, sort_keys=False))
    jobs = scheduled_jobs(run_snakemake(work, "-n", "results/table1.tex", "--configfile", str(other)).stdout)
    assert {rule for rule, _ in jobs} == {"cross_validate_checkpoint", "evaluate", "combine_seeds", "table1"}


def test_a_checkpoint_s_folds_run_in_one_job_and_leave_no_resume_state(sourced_run):
    """`cross_validation.jobs: per_checkpoint`: one job per checkpoint for all its folds (the study on a cluster),
    which keeps its progress in `<run>.resume/` only while it runs."""
    work, _, _, result = sourced_run
    assert "cross_validate_checkpoint" in result.stdout + result.stderr and "cross_validate_fold" not in \
        result.stdout + result.stderr
    assert not list((work / "results/runs/robust_desc").glob("*/*.resume"))


def test_the_folds_cross_validation_and_a_given_run_by_hand_are_the_jobs(sourced_run, per_fold, tmp_path):
    """The rule map's commands for fetch_folds, cross_validate_fold, merge_folds and import_run write what the jobs
    wrote (tests/workflow/test_by_hand.py checks the others on the tiny run)."""
    from posbias.cli import main

    work, _, _, _ = sourced_run
    results, config = work / "results", str(work / "config.yaml")
    main(["fetch", "--config", config, "--folds", "robust_desc", "--out", str(tmp_path / "folds.tsv")])
    folds = results / "data/robust/folds/robust_desc.tsv"
    assert (tmp_path / "folds.tsv").read_bytes() == folds.read_bytes()
    data = results / "data/robust"
    main(["cross-validate", "fold", "--config", config, "--model", "maxp", "--seed", "1",
          "--init", str(results / "models/maxp/seed1"), "--tokens", str(next((results / "tokens/robust").iterdir())),
          "--queries", str(data / "queries/robust_desc.tsv"), "--qrels", str(data / "qrels/robust_desc.txt"),
          "--candidates", str(results / "candidates/bm25/robust_desc/top6.run"), "--folds", str(folds),
          "--fold", "2", "--run", str(tmp_path / "fold2.run")])
    fold_runs = results / "runs-cv/robust_desc/maxp/seed1"
    assert (tmp_path / "fold2.run").read_bytes() == (fold_runs / "fold2.run").read_bytes()
    main(["cross-validate", "merge", "--model", "maxp", "--seed", "1",
          "--runs", *(str(fold_runs / f"fold{k}.run") for k in range(1, 6)), "--folds", str(folds),
          "--run", str(tmp_path / "merged.run")])
    assert (tmp_path / "merged.run").read_bytes() == (results / "runs/robust_desc/maxp/seed1.run").read_bytes()
    main(["import-run", "--run", str(work / "given.run"), "--queries", str(results / "data/nq/queries/nq_given.tsv"),
          "--out", str(tmp_path / "given.run"), "--depth", "3"])
    assert (tmp_path / "given.run").read_bytes() == (results / "candidates/given/nq_given/top3.run").read_bytes()


@pytest.fixture(scope="module")
def per_fold(sourced_run):
    """The sourced run's directory after MaxP's merged Robust04 run was made again with `cross_validation.jobs:
    per_fold` (a job per fold, then a merge job, keeping each fold's run in results/runs-cv/): the bytes of the
    merged run the per-checkpoint job wrote before."""
    work, _, _, _ = sourced_run
    import yaml

    merged = work / "results/runs/robust_desc/maxp/seed1.run"
    before = merged.read_bytes()
    config = yaml.safe_load((work / "config.yaml").read_text())
    config["cross_validation"]["jobs"] = "per_fold"
    other = work / "per_fold.yaml"
    other.write_text(yaml.safe_dump(config, sort_keys=False))
    target = str(merged.relative_to(work))
    jobs = scheduled_jobs(run_snakemake(work, "-n", target, "--configfile", str(other)).stdout)
    assert sorted(w for r, w in jobs if r == "cross_validate_fold") == [
        f"queryset=robust_desc, model=maxp, seed=1, fold={k}" for k in range(1, 6)]
    assert {r for r, _ in jobs} == {"cross_validate_fold", "merge_folds"}
    run_snakemake(work, "-j", "2", target, "--configfile", str(other))
    return before


def test_a_job_per_fold_merges_the_run_the_checkpoint_s_one_job_wrote(sourced_run, per_fold):
    """`per_fold` and `per_checkpoint` make the same merged run, byte for byte (so the same tables)."""
    work, _, _, _ = sourced_run
    assert (work / "results/runs/robust_desc/maxp/seed1.run").read_bytes() == per_fold


def test_cross_validation_merges_one_run_per_fold(sourced_run, per_fold):
    work, _, robust, _ = sourced_run
    for fold in range(1, 6):
        fold_run = read_run(work / f"results/runs-cv/robust_desc/maxp/seed1/fold{fold}.run")
        assert {robust["folds"][q] for q in fold_run} <= {fold}
    merged = read_run(work / "results/runs/robust_desc/maxp/seed1.run")
    assert set(merged) == {q for q in robust["folds"] if q in robust["qrels"]}
    assert not (work / "results/models-cv").exists()  # fold models are not kept on disk
