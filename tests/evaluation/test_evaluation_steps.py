"""The evaluation jobs that make numbers (one per run and seed: a few hundred in the demo) write per-query values
and their seed averages, and start without what only the tables need."""

import subprocess
import sys

import pandas as pd

from posbias.io import write_qrels


def test_a_run_is_evaluated_and_averaged_without_loading_scipy_or_a_plotting_library(tmp_path):
    """An evaluation job pays for pandas and ir_measures only: scipy.stats alone took about a second per job."""
    qrels, run = tmp_path / "qrels.txt", tmp_path / "a.run"
    write_qrels(qrels, {"q1": {"d1": 1}, "q2": {"d2": 1}})
    run.write_text("q1 Q0 d2 1 2.0 a\nq1 Q0 d1 2 1.0 a\nq2 Q0 d2 1 2.0 a\n")
    values = [tmp_path / f"seed{seed}.parquet" for seed in (1, 2)]
    script = ("import sys; from posbias.evaluation.steps import combine_seeds, evaluate_run; "
              + "".join(f"evaluate_run({str(qrels)!r}, {str(run)!r}, ['RR@10'], {str(path)!r}, system='a', "
                        f"seed={seed}, queryset='dev'); " for seed, path in zip((1, 2), values))
              + f"combine_seeds({[str(p) for p in values]!r}, {str(tmp_path / 'per_seed.parquet')!r}, "
              f"{str(tmp_path / 'averaged.parquet')!r}); "
              "print(sorted({'scipy.stats', 'statsmodels', 'matplotlib', 'torch'} & set(sys.modules)))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
    averaged = pd.read_parquet(tmp_path / "averaged.parquet").set_index("qid")["value"]
    assert averaged.to_dict() == {"q1": 0.5, "q2": 1.0}
    assert len(pd.read_parquet(tmp_path / "per_seed.parquet")) == 4
