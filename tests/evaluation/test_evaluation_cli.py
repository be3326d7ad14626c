"""`posbias evaluate` with a config's query set and the evaluate job's labels, and `posbias pool`, on small runs."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from posbias.cli import main

ROOT = Path(__file__).resolve().parents[2]
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = "q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 1.0 t\nq2 Q0 d3 1 3.0 t\n"


@pytest.fixture
def files(tmp_path):
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    dev = config["querysets"]["dev"]
    dev.update(metrics=[*dev["metrics"], "P@1"], rel_level=2)
    config["querysets"]["test"]["metrics"] = [*config["querysets"]["test"]["metrics"], "P@1"]
    config["querysets"]["both"] = {"pool": ["dev", "test"], "metrics": ["P@1"]}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN)
    return tmp_path


def test_evaluate_takes_the_query_set_s_metrics_and_level_and_labels_the_rows(files, capsys):
    main(["evaluate", "--config", str(files / "config.yaml"), "--queryset", "dev", "--system", "maxp", "--seed", "3",
          "--qrels", str(files / "qrels.txt"), "--run", str(files / "a.run"), "--per-query", str(files / "v.parquet")])
    summary = json.loads(capsys.readouterr().out)
    config = yaml.safe_load((files / "config.yaml").read_text())
    assert set(summary) == {*config["querysets"]["dev"]["metrics"], "n_queries"}
    # rel_level 2: only q2's document counts, so q1 scores 0 and q2 1
    assert (summary["RR@10"], summary["P@1"], summary["n_queries"]) == (0.5, 0.5, 2)
    frame = pd.read_parquet(files / "v.parquet")
    assert set(frame.columns) == {"qid", "metric", "value", "system", "seed", "queryset"}
    assert set(frame["system"]) == {"maxp"} and set(frame["seed"]) == {3} and set(frame["queryset"]) == {"dev"}


def test_explicit_flags_win_over_the_config(files, capsys):
    main(["evaluate", "--config", str(files / "config.yaml"), "--queryset", "dev", "--metric", "RR@10",
          "--rel-level", "1", "--qrels", str(files / "qrels.txt"), "--run", str(files / "a.run")])
    assert json.loads(capsys.readouterr().out) == {"RR@10": 0.75, "n_queries": 2}


@pytest.mark.parametrize("flags, message", [
    (["--system", "maxp", "--per-query", "x.parquet"], "--config and --system need --queryset"),
    (["--queryset", "dev", "--system", "maxp"], "--system labels the rows of --per-query; give it too"),
    (["--queryset", "dev"], "--queryset goes with --config (its metrics) or --system (the rows' labels)"),
])
def test_evaluate_refuses_labels_without_what_they_label(files, usage_error, flags, message):
    assert usage_error(["evaluate", "--qrels", files / "qrels.txt", "--run", files / "a.run", *flags]) \
        .startswith(message)


def test_pool_stacks_the_members_in_the_pool_s_order_with_prefixed_ids(files):
    values = []
    for member in ("dev", "test"):
        path = files / f"{member}.parquet"
        main(["evaluate", "--qrels", str(files / "qrels.txt"), "--run", str(files / "a.run"), "--metric", "P@1",
              "--metric", "RR@10", "--queryset", member, "--system", "maxp", "--per-query", str(path)])
        values.append(str(path))
    main(["pool", "--config", str(files / "config.yaml"), "--queryset", "both", "--values", *values,
          "--out", str(files / "both.parquet")])
    pooled = pd.read_parquet(files / "both.parquet")
    assert list(pooled["qid"]) == ["dev:q1", "dev:q2", "test:q1", "test:q2"]
    assert set(pooled["metric"]) == {"P@1"} and set(pooled["queryset"]) == {"both"}


def test_pool_names_a_plain_query_set_and_a_wrong_number_of_files(files, input_error):
    config, values = files / "config.yaml", files / "a.run"
    assert input_error(["pool", "--config", config, "--queryset", "dev", "--values", values,
                        "--out", files / "o.parquet"]) == f"--queryset dev: querysets.dev in {config} is not pooled"
    assert input_error(["pool", "--config", config, "--queryset", "both", "--values", values,
                        "--out", files / "o.parquet"]) == \
        "--values: one file per member of the pool (dev, test), in that order; got 1"
