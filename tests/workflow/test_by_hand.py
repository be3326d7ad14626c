"""Every rule's work by hand (the rule map's "by hand" column, docs/architecture.md): on the tiny config's finished
run, the commands write the files the workflow's jobs wrote, byte for byte (the same arguments, from the same
config accessors). The cross-validation commands are checked on the sources workflow
(tests/workflow/test_sources_workflow.py), the manifest in tests/provenance/test_manifest.py."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from posbias.cli import main

pytestmark = pytest.mark.slow  # reads the tiny run (tests/workflow/conftest.py)

FORMATS = ("tex", "csv", "md", "html")


def same_files(mine: Path, theirs: Path, names: list[str]) -> None:
    for name in names:
        assert (mine / name).read_bytes() == (theirs / name).read_bytes(), name


def test_combine_seeds_by_hand_writes_the_jobs_parquet_files(finished_run, tmp_path):
    evaluations = sorted(str(path) for path in (finished_run / "results/eval/dev").glob("*/seed*.parquet"))
    assert len(evaluations) >= 8  # the retriever, random and each model's seeds
    main(["study", "combine-seeds", "--values", *evaluations, "--per-seed", str(tmp_path / "per_seed.parquet"),
          "--averaged", str(tmp_path / "seed_averaged.parquet")])
    for name in ("per_seed.parquet", "seed_averaged.parquet"):
        mine, theirs = pd.read_parquet(tmp_path / name), pd.read_parquet(finished_run / "results/eval/dev" / name)
        columns = ["system", "seed", "qid"] if "seed" in mine else ["system", "qid"]
        pd.testing.assert_frame_equal(mine.sort_values(columns).reset_index(drop=True),
                                      theirs.sort_values(columns).reset_index(drop=True))


@pytest.mark.parametrize("table, querysets", [("table1", ["dev", "test"]), ("table7", ["dev", "test"]),
                                              ("table4", ["farrelevant"])])
def test_a_model_table_by_hand_is_the_jobs_table(finished_run, tmp_path, table, querysets):
    averaged = [str(finished_run / f"results/eval/{qs}/seed_averaged.parquet") for qs in querysets]
    finetuned = ["--finetuned", str(finished_run / "results/eval-finetuned/farrelevant/seed_averaged.parquet")] \
        if table == "table4" else []
    main(["study", "table", "--config", str(finished_run / "config.yaml"), "--name", table, "--averaged", *averaged,
          *finetuned, "--out", str(tmp_path)])
    for ext in FORMATS:
        assert (tmp_path / f"{table}.{ext}").read_bytes() == (finished_run / f"results/{table}.{ext}").read_bytes()


def test_a_table_the_config_lacks_is_named(finished_run, input_error):
    message = input_error(["study", "table", "--config", str(finished_run / "config.yaml"), "--name", "table9",
                           "--averaged", str(finished_run / "results/eval/dev/seed_averaged.parquet"), "--out", "x"])
    assert message.startswith("--name table9: not a model table of") and "table1" in message


def test_the_outcome_and_first_stage_tables_by_hand_are_the_jobs_tables(finished_run, tmp_path):
    config = str(finished_run / "config.yaml")
    k = 5  # tables.outcomes.k of the tiny config
    main(["study", "outcomes", "--config", config,
          "--per-seed", *(str(finished_run / f"results/eval-cutoff/k{k}/{qs}/per_seed.parquet")
                          for qs in ("dev", "farrelevant")),
          "--qrels", *(str(finished_run / f"results/data/{c}/qrels/{qs}.txt")
                       for c, qs in (("synthetic", "dev"), ("farrelevant", "farrelevant"))),
          "--out", str(tmp_path)])
    main(["study", "first-stage", "--config", config,
          "--values", *sorted(str(p) for p in (finished_run / "results/eval-first-stage").glob("*/*/top20.parquet")),
          "--out", str(tmp_path)])
    for name in ("outcomes", "first_stage"):
        for ext in FORMATS:
            assert (tmp_path / f"{name}.{ext}").read_bytes() == (finished_run / f"results/{name}.{ext}").read_bytes()


def test_the_dataset_tables_and_their_statistics_by_hand_are_the_jobs(finished_run, tmp_path):
    config, results = str(finished_run / "config.yaml"), finished_run / "results"
    stats = tmp_path / "stats"
    for collection in ("synthetic", "farrelevant"):  # the whitespace tokenizer: counted from the documents
        main(["study", "collection-stats", "--config", config, "--collection", collection,
              "--docs", str(results / f"data/{collection}/docs.jsonl"),
              "--out", str(stats / f"collections/{collection}.json")])
    for collection, queryset in (("synthetic", "train"), ("synthetic", "dev"), ("synthetic", "test"),
                                 ("farrelevant", "farrelevant"), ("farrelevant", "farrelevant_train")):
        main(["study", "queryset-stats", "--config", config, "--queryset", queryset,
              "--queries", str(results / f"data/{collection}/queries/{queryset}.tsv"),
              "--qrels", str(results / f"data/{collection}/qrels/{queryset}.txt"),
              "--out", str(stats / f"querysets/{queryset}.json")])
    same_files(stats, results / "stats", [str(p.relative_to(stats)) for p in stats.rglob("*.json")])
    main(["study", "dataset-tables", "--config", config, "--stats", str(stats), "--out", str(tmp_path)])
    same_files(tmp_path, results, [f"table{n}.{ext}" for n in (9, 10) for ext in FORMATS])


def test_table11_and_the_figures_by_hand_are_the_jobs(finished_run, tmp_path):
    config, results = str(finished_run / "config.yaml"), finished_run / "results"
    main(["study", "table11", "--config", config, "--models", str(results / "models"), "--out", str(tmp_path)])
    main(["study", "farrelevant-figure", "--config", config,
          "--per-seed", str(results / "eval/farrelevant/per_seed.parquet"),
          "--finetuned", str(results / "eval-finetuned/farrelevant/per_seed.parquet"), "--out", str(tmp_path)])
    main(["study", "efficiency-figure", "--config", config, "--table", str(results / "table1.csv"),
          "--runs", str(results / "runs"), "--out", str(tmp_path)])
    same_files(tmp_path, results, [f"table11.{ext}" for ext in FORMATS])
    same_files(tmp_path, results / "figures", ["farrelevant.png", "efficiency.png"])


def test_a_directory_missing_a_file_is_named(finished_run, tmp_path, input_error):
    message = input_error(["study", "table11", "--config", finished_run / "config.yaml", "--models", tmp_path,
                           "--out", tmp_path])
    assert message.startswith(f"--models {tmp_path}: lacks firstp/seed1") and "(posbias train)" in message


def test_evaluation_and_the_random_baseline_by_hand_are_the_jobs(finished_run, tmp_path, capsys):
    config, results = str(finished_run / "config.yaml"), finished_run / "results"
    data = results / "data/synthetic"
    main(["evaluate", "--config", config, "--queryset", "dev", "--system", "maxp", "--seed", "2",
          "--qrels", str(data / "qrels/dev.txt"), "--run", str(results / "runs/dev/maxp/seed2.run"),
          "--per-query", str(tmp_path / "maxp.parquet")])
    assert (tmp_path / "maxp.parquet").read_bytes() == (results / "eval/dev/maxp/seed2.parquet").read_bytes()
    candidates = results / "candidates/bm25/dev/top6.run"  # the query set's depth (top20: the first-stage table's)
    main(["shuffle", "--candidates", str(candidates), "--run", str(tmp_path / "random.run"), "--seed", "1"])
    assert (tmp_path / "random.run").read_bytes() == (results / "runs/dev/random/seed1.run").read_bytes()


def test_fine_tuning_by_hand_reranks_as_the_job_did(finished_run, tmp_path):
    results = finished_run / "results"
    tokens = next((results / "tokens/farrelevant").iterdir())
    main(["finetune", "--config", str(finished_run / "config.yaml"), "--model", "firstp", "--seed", "1",
          "--init", str(results / "models/firstp/seed1"), "--tokens", str(tokens),
          "--queries", str(results / "data/farrelevant/queries/farrelevant_train.tsv"),
          "--qrels", str(results / "data/farrelevant/qrels/farrelevant_train.txt"),
          "--candidates", str(results / "candidates/bm25/farrelevant_train/top6.run"),
          "--rerank", str(tokens), str(results / "data/farrelevant/queries/farrelevant.tsv"),
          str(results / "candidates/bm25/farrelevant/top6.run"), str(tmp_path / "ft.run"),
          "--out", str(tmp_path / "finetuned")])
    assert (tmp_path / "ft.run").read_bytes() == \
        (results / "runs-finetuned/farrelevant/firstp/seed1.run").read_bytes()


def test_lost_in_the_middle_scores_and_report_by_hand_are_the_jobs(finished_run, tmp_path):
    config, results = str(finished_run / "config.yaml"), finished_run / "results"
    tasks = sorted(p.stem for p in (results / "litm/eval").glob("*.parquet"))
    assert tasks
    for task in tasks:
        main(["litm", "evaluate", "--config", config, "--task", task,
              "--predictions", str(results / "litm/predictions"), "--out", str(tmp_path / f"{task}.parquet")])
        assert (tmp_path / f"{task}.parquet").read_bytes() == (results / f"litm/eval/{task}.parquet").read_bytes()
    main(["litm", "report", "--config", config, "--eval", *(str(tmp_path / f"{t}.parquet") for t in tasks),
          "--out", str(tmp_path / "litm")])
    written = sorted(str(p.relative_to(tmp_path / "litm")) for p in (tmp_path / "litm").rglob("*") if p.is_file())
    assert written and any(name.endswith(".png") for name in written)
    same_files(tmp_path / "litm", results / "litm", written)


def test_the_audit_by_hand_writes_the_jobs_files(finished_run, tmp_path):
    config, results = str(finished_run / "config.yaml"), finished_run / "results"
    main(["export-hf", "--checkpoint", str(results / "models/firstp/seed1"), "--out", str(tmp_path / "exported")])
    same_files(tmp_path / "exported", results / "audit/exported/firstp/seed1", ["config.json", "model.safetensors"])
    main(["audit", "--config", config, "--name", "reverse", "--battery", "order", "--out", str(tmp_path / "audit"),
          "--cache-mode", "off", "--no-report"])
    same_files(tmp_path / "audit/reverse", results / "audit/reverse", ["order.parquet", "order.curve.csv"])
    for name in ("exported_firstp", "firstp_checkpoint", "reverse_psc"):  # the jobs' files, reported again by hand
        for path in (results / "audit" / name).glob("*.*"):
            if path.name != "card.html":
                (tmp_path / "audit" / name).mkdir(parents=True, exist_ok=True)
                (tmp_path / "audit" / name / path.name).write_bytes(path.read_bytes())
    (tmp_path / "audit/reverse/order.json").write_bytes((results / "audit/reverse/order.json").read_bytes())
    main(["audit", "--report-only", "--out", str(tmp_path / "audit")])
    same_files(tmp_path / "audit", results / "audit", [f"{board}.{ext}" for ext in FORMATS
                                                       for board in ("leaderboard", "mitigations")])
    same_files(tmp_path / "audit", results / "audit", [f"{name}/card.html" for name in
                                                       ("exported_firstp", "firstp_checkpoint", "reverse")])
    same_files(tmp_path / "audit", results / "audit", [f"exported_firstp/grid.heatmap.{ext}" for ext in
                                                       ("png", "pdf", "csv")])
