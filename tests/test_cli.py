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


def test_fetch_and_truncate_a_local_collection_named_in_a_config(tmp_path):
    import gzip
    from pathlib import Path

    import yaml

    from posbias.io import read_documents, read_qrels, read_queries

    docs = tmp_path / "docs.jsonl.gz"
    with gzip.open(docs, "wt") as out:
        out.write(json.dumps({"id": "d1", "text": "one two three four five six"}) + "\n")
        out.write(json.dumps({"id": "d2", "text": "seven eight"}) + "\n")
    (tmp_path / "q.tsv").write_text("q1\tthree\nq2\tunjudged\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    config = yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text())
    config["collections"] = {"mine": {"documents": {"kind": "local", "path": str(docs)}}}
    config["querysets"]["mine_q"] = {"collection": "mine", "metrics": ["RR"], "source": {
        "kind": "local", "queries": str(tmp_path / "q.tsv"), "qrels": str(tmp_path / "qrels.txt")}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    cfg = str(tmp_path / "config.yaml")
    assert main(["fetch", "--config", cfg, "--collection", "mine", "--out", str(tmp_path / "out.jsonl")]) == 0
    assert read_documents(tmp_path / "out.jsonl") == {"d1": "one two three four five six", "d2": "seven eight"}
    assert main(["fetch", "--config", cfg, "--queryset", "mine_q", "--out", str(tmp_path / "out.tsv"),
                 "--qrels", str(tmp_path / "out.qrels")]) == 0
    assert read_queries(tmp_path / "out.tsv") == {"q1": "three"}  # the unjudged query is left out
    assert read_qrels(tmp_path / "out.qrels") == {"q1": {"d1": 1}}
    assert main(["truncate", "--docs", str(tmp_path / "out.jsonl"), "--out", str(tmp_path / "cut.jsonl"),
                 "--tokenizer", "offline:all-MiniLM-L6-v2", "--max-tokens", "3"]) == 0
    assert read_documents(tmp_path / "cut.jsonl") == {"d1": "one two three", "d2": "seven eight"}
