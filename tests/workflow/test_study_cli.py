"""`posbias study`: the study's seed pooling and model tables by hand, on the tiny config's finished run, write
the files the workflow's jobs wrote (the same arguments: CFG.tables.params)."""

from __future__ import annotations

import pandas as pd
import pytest

from posbias.cli import main

pytestmark = pytest.mark.slow  # reads the tiny run (tests/workflow/conftest.py)

FORMATS = ("tex", "csv", "md", "html")


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
