"""Language models from the command line: `posbias rerank --model <rankgpt>` and `posbias litm build|run|score`,
each step alone, with the deterministic mock models of config/test/tiny.yaml (no weights, no network)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import yaml

from posbias.cli import main
from posbias.io import read_run

ROOT = Path(__file__).resolve().parents[2]
TINY = yaml.safe_load((ROOT / "config" / "test" / "tiny.yaml").read_text())


def write_config(tmp_path: Path) -> Path:
    config = {**TINY, "llm": {**TINY["llm"], "cache": {"dir": str(tmp_path / "cache"), "mode": "read_write"}}}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_rankgpt_reranks_document_texts_through_the_mock_and_replays_read_only(tmp_path, capsys):
    config = write_config(tmp_path)
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": f"d{i}", "text": f"passage number {i}. more words"}) + "\n"
                            for i in range(1, 5)))
    (tmp_path / "q.tsv").write_text("q1\tpassages\n")
    (tmp_path / "c.run").write_text("".join(f"q1 Q0 d{i} {i} {10 - i} bm25\n" for i in range(1, 5)))
    argv = ["rerank", "--model", "longp_rankgpt", "--config", str(config), "--docs", str(docs), "--queries",
            str(tmp_path / "q.tsv"), "--candidates", str(tmp_path / "c.run"), "--run", str(tmp_path / "out.run")]
    assert main(argv) == 0
    run = read_run(tmp_path / "out.run")
    assert sorted(run["q1"], key=run["q1"].get, reverse=True) == ["d4", "d3", "d2", "d1"]  # the mock reverses
    assert run["q1"]["d4"] == -1.0  # minus the rank
    # the answer was cached: replaying it read-only calls nothing and gives the same run
    (tmp_path / "out.run").rename(tmp_path / "first.run")
    assert main([*argv, "--cache-mode", "read_only"]) == 0
    assert read_run(tmp_path / "out.run") == read_run(tmp_path / "first.run")


def test_rankgpt_needs_documents_and_a_read_only_miss_names_the_missing_answer(tmp_path, input_error):
    config = write_config(tmp_path)
    (tmp_path / "q.tsv").write_text("q1\tpassages\n")
    (tmp_path / "c.run").write_text("q1 Q0 d1 1 2 bm25\nq1 Q0 d2 2 1 bm25\n")
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "one"}\n{"id": "d2", "text": "two"}\n')
    common = ["rerank", "--model", "longp_rankgpt", "--config", str(config), "--queries", str(tmp_path / "q.tsv"),
              "--candidates", str(tmp_path / "c.run"), "--run", str(tmp_path / "out.run")]
    assert input_error(common).startswith("--docs: required here")
    message = input_error([*common, "--docs", str(docs), "--cache-mode", "read_only"])
    assert "(mode read_only) lacks 1 answer(s)" in message
    assert not (tmp_path / "out.run").exists()


def test_litm_build_run_and_score_each_step_alone(tmp_path, capsys):
    config = write_config(tmp_path)
    data, predictions = tmp_path / "data", tmp_path / "predictions"
    assert main(["litm", "build", "--config", str(config), "--task", "kv", "--out", str(data)]) == 0
    assert sorted(p.name for p in data.iterdir()) == [f"n4_gold_at_{i}.jsonl.gz" for i in (0, 1, 3)]
    assert main(["litm", "run", "--config", str(config), "--task", "kv", "--model", "u_curve", "--data", str(data),
                 "--out", str(predictions)]) == 0
    capsys.readouterr()
    middle = predictions / "default" / "n4_gold_at_1.jsonl.gz"
    assert main(["litm", "score", "--predictions", str(middle), "--out", str(tmp_path / "scored.jsonl.gz")]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == 4 and result["accuracy"] == 0.5  # the mock U-curve: 2 of 4 in the middle
    with gzip.open(tmp_path / "scored.jsonl.gz", "rt") as handle:
        assert [json.loads(line)["metric_accuracy"] for line in handle] == [1.0, 1.0, 0.0, 0.0]


def test_litm_score_reads_a_file_with_only_the_authors_fields(tmp_path, capsys):
    path = tmp_path / "theirs.jsonl"
    path.write_text(json.dumps({"question": "who", "answers": ["Ada Lovelace"], "model_answer": "ada lovelace.\nx"})
                    + "\n" + json.dumps({"question": "who", "answers": ["Ada"], "model_answer": "\nAda"}) + "\n")
    assert main(["litm", "score", "--predictions", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == 0.5  # a leading newline: an empty first line
    assert main(["litm", "score", "--predictions", str(path), "--lstrip-first"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == 1.0


def test_litm_run_names_an_unknown_model_and_missing_data(tmp_path, input_error):
    config = write_config(tmp_path)
    (tmp_path / "data").mkdir()
    message = input_error(["litm", "run", "--config", str(config), "--task", "kv", "--model", "gpt9", "--data",
                           str(tmp_path / "data"), "--out", str(tmp_path / "p")])
    assert message.startswith("--model gpt9:") and "llm.models.gpt9" in message
    message = input_error(["litm", "run", "--config", str(config), "--task", "kv", "--model", "u_curve", "--data",
                           str(tmp_path / "data"), "--out", str(tmp_path / "p")])
    assert message.startswith(f"--data {tmp_path / 'data'}: no n4_gold_at_0.jsonl.gz")
