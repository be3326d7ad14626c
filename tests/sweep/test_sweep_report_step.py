"""The report steps read the workflow's files (per-seed and seed-averaged Parquet, positions, candidates) and write
every format; a positions file that matches no evaluated query is refused."""

from __future__ import annotations

import pandas as pd
import pytest

from posbias.errors import InputError
from posbias.io import write_run
from posbias.evaluation.steps import write_parquet
from posbias.sweep.jobs import BreakdownJob, ShownModels, SweepReportJob
from posbias.sweep.steps import breakdown_report, sweep_report
from posbias.sweep.positions import write_sweep_positions

STATISTICS = {"test": "t", "correction": "holm", "permutations": 999, "seed": 0}
FORMATS = ("tex", "csv", "md", "html")


def test_sweep_report_writes_table_and_figure(tmp_path):
    bases, rows, values, run = ["a", "b", "c"], [], [], {}
    for i, base in enumerate(bases):
        for p in range(3):
            qid = f"{base}@p{p}"
            rows.append((qid, 10 * p, p, p, base, 40))
            run[qid] = {f"{base}-doc@p{p}": 3.0, "x": 2.0, "y": 1.0, "z": 0.5}
            for system, rank in (("firstp", 1 if p == 0 else 3 + i % 2), ("maxp", 1 + (i + p) % 2)):
                for seed in (1, 2):
                    values.append({"qid": qid, "metric": "RR", "value": 1 / rank, "system": system, "seed": seed,
                                   "queryset": "sweep"})
    write_sweep_positions(tmp_path / "positions.tsv", rows)
    write_run(tmp_path / "candidates.run", run, tag="sweep")
    write_parquet(pd.DataFrame(values), str(tmp_path / "per_seed.parquet"))
    table = {fmt: str(tmp_path / f"sweep.{fmt}") for fmt in FORMATS}
    figure = [str(tmp_path / "sweep.png"), str(tmp_path / "sweep.pdf")]
    sensitivity = {fmt: str(tmp_path / f"sweep_sensitivity.{fmt}") for fmt in FORMATS}
    shown = ShownModels({"firstp": "FirstP", "maxp": "MaxP"}, 2, [])
    sweep_report(SweepReportJob(str(tmp_path / "per_seed.parquet"), str(tmp_path / "positions.tsv"),
                                str(tmp_path / "candidates.run"), shown, "RR", STATISTICS, 0.05, 16, table, figure,
                                sensitivity=sensitivity))
    assert all((tmp_path / f"sweep.{ext}").stat().st_size > 0 for ext in (*FORMATS, "png", "pdf"))
    csv = pd.read_csv(table["csv"])
    firstp = csv[csv["model"] == "firstp"].set_index("position")
    assert firstp.loc[0, "mrr"] == 1.0 and firstp.loc[1, "mean_rank"] == pytest.approx(10 / 3)
    assert csv["random_mrr"].iloc[0] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)
    markdown = open(table["md"]).read()
    assert "| FirstP | 1.000 (1.0) |" in markdown and "first window: 16 tokens" in markdown
    # the metric suite: FirstP's MRR falls from 1 to 11/36 after position 1 and stays; MaxP's dips in the middle
    suite = pd.read_csv(sensitivity["csv"]).set_index("model")
    assert suite.loc["firstp", "psi"] == pytest.approx(25 / 36)
    assert suite.loc["firstp", "primacy"] == pytest.approx(25 / 36)
    assert suite.loc["firstp", "recency"] == pytest.approx(0) and suite.loc["firstp", "significant_drops"] == 2
    assert suite.loc["firstp", "reach_start"] == 0  # the drop comes right after the first position
    assert suite.loc["maxp", "psi"] == pytest.approx(0.2) and suite.loc["maxp", "significant_drops"] == 0
    assert suite.loc["maxp", "primacy"] == pytest.approx(1 / 6) and suite.loc["maxp", "reach_start"] == 20
    assert "| FirstP | 1.000 | 0.694 | 0.694 | 0.694 | 0.694 | 0.000 | 2 | 0 |" in open(sensitivity["md"]).read()


def test_breakdown_report(tmp_path):
    values = [{"system": s, "queryset": "dev", "metric": "RR@10", "qid": f"q{i}", "value": v, "n_seeds": 2}
              for s in ("retriever", "firstp") for i, v in enumerate([1.0, 0.5, 1.0, 0.2, 0.1, 0.0])]
    write_parquet(pd.DataFrame(values), str(tmp_path / "averaged.parquet"))
    (tmp_path / "positions.tsv").write_text("qid\tstart\nq0\t0\nq1\t3\nq2\t10\nq3\t30\nq4\t40\n")
    outputs = {fmt: str(tmp_path / f"breakdown.{fmt}") for fmt in FORMATS}
    spec = {"queryset": "dev", "metric": "RR@10", "bins": [24]}
    breakdown_report(BreakdownJob(str(tmp_path / "averaged.parquet"), str(tmp_path / "positions.tsv"), spec,
                                  ShownModels({"firstp": "FirstP"}, 2, []), "BM25", "holm", 0.05, outputs))
    markdown = open(outputs["md"]).read()
    assert "| Ranker | [0, 24) (n = 3) | ≥ 24 (n = 2) |" in markdown and "| BM25 | 0.833 | 0.150 |" in markdown
    assert "1 queries without a position are left out" in markdown
    (tmp_path / "other.tsv").write_text("qid\tstart\nz1\t3\n")
    with pytest.raises(InputError, match="none of its queries is among the 6 evaluated queries of dev"):
        breakdown_report(BreakdownJob(str(tmp_path / "averaged.parquet"), str(tmp_path / "other.tsv"), spec,
                                      ShownModels({"firstp": "FirstP"}, 2, []), "BM25", "holm", 0.05, outputs))
