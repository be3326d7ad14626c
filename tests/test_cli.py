import json

from posbias.cli import main


def test_evaluate_prints_json(tmp_path, capsys):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d4 1\n")
    run = tmp_path / "a.run"
    run.write_text("q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 1.0 t\nq2 Q0 d4 1 3.0 t\n")
    assert main(["evaluate", "--qrels", str(qrels), "--run", str(run), "--metric", "RR@10",
                 "--per-query", str(tmp_path / "pq.parquet")]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary == {"RR@10": 0.75, "n_queries": 2}
    assert (tmp_path / "pq.parquet").exists()
