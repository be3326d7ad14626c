import json

import pytest

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



# q1's documents all tie at 1.0 (trec_eval order: d3, d2, d1, then d4); q2's tie puts the unjudged z first;
# q3 is judged but not in the run and q4 is in the run but not judged: both are skipped.
EVAL_QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 a 1\nq3 0 b 1\n"
EVAL_RUN = ("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d3 3 1.0 t\nq1 Q0 d4 4 0.5 t\n"
            "q2 Q0 a 1 0.1 t\nq2 Q0 z 2 0.1 t\nq4 Q0 x 1 1.0 t\n")
EVAL_METRICS = ["nDCG@10", "nDCG@20", "P@20", "AP", "RR", "RR@10", "R@100", "Judged@10"]


def _write(path, text):
    import bz2
    import gzip
    import lzma

    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(path.suffix, open)
    with opener(path, "wt") as handle:
        handle.write(text)
    return str(path)


def _evaluate(capsys, qrels, run, *extra):
    args = ["evaluate", "--qrels", qrels, "--run", run, *extra]
    for metric in EVAL_METRICS:
        args += ["--metric", metric]
    assert main(args) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("rel_level", [1, 2])
@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_evaluate_matches_trec_eval_on_compressed_inputs(tmp_path, capsys, suffix, rel_level):
    import io

    import pytrec_eval

    plain = _evaluate(capsys, _write(tmp_path / "qrels.txt", EVAL_QRELS), _write(tmp_path / "a.run", EVAL_RUN),
                      "--rel-level", str(rel_level))
    packed = _evaluate(capsys, _write(tmp_path / f"qrels.txt{suffix}", EVAL_QRELS),
                       _write(tmp_path / f"a.run{suffix}", EVAL_RUN), "--rel-level", str(rel_level))
    assert packed == plain
    summary = json.loads(plain)
    assert set(summary) == {*EVAL_METRICS, "n_queries"}
    assert summary["n_queries"] == 2  # q1 and q2
    evaluator = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(io.StringIO(EVAL_QRELS)),
                                               {"ndcg_cut.10,20", "P.20", "map", "recip_rank", "recall.100"},
                                               relevance_level=rel_level)
    reference = evaluator.evaluate(pytrec_eval.parse_run(io.StringIO(EVAL_RUN)))
    assert set(reference) == {"q1", "q2"}
    names = {"nDCG@10": "ndcg_cut_10", "nDCG@20": "ndcg_cut_20", "P@20": "P_20", "AP": "map",
             "RR": "recip_rank", "R@100": "recall_100"}
    for metric, measure in names.items():
        assert summary[metric] == pytest.approx(sum(q[measure] for q in reference.values()) / 2), metric
    # by hand, in trec_eval order: q1 d3 d2 d1 d4, q2 z a
    assert summary["RR@10"] == pytest.approx((1 + 1 / 2) / 2 if rel_level == 1 else (1 / 3 + 0) / 2)
    assert summary["Judged@10"] == pytest.approx((3 / 4 + 1 / 2) / 2)


@pytest.mark.parametrize("qrels,run,where", [
    ("q1 0 d1 1\n", "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 0.5\n", "a.run:2:"),  # too few fields
    ("q1 0 d1 1\n", "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 high t\n", "a.run:2: score 'high'"),
    ("q1 0 d1 1\nq1 0 d2 yes\n", "q1 Q0 d1 1 1.0 t\n", "qrels.txt:2: grade 'yes'"),
    ("q1 0 d1 1\n", "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 0.5 t\nq1 Q0 d1 3 0.2 t\n", "a.run:3: document d1 is listed twice"),
    ("q1 0 d1 1\nq1 0 d1 0\n", "q1 Q0 d1 1 1.0 t\n", "qrels.txt:2: document d1 is judged twice"),
])
@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_input_error_is_one_line_and_exit_2(tmp_path, capsys, qrels, run, where, command):
    run_path = _write(tmp_path / "a.run", run)
    args = [command, "--qrels", _write(tmp_path / "qrels.txt", qrels), "--run", run_path]
    args += ["--run", run_path] if command == "compare" else []
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [captured.err.strip()]  # one line, no traceback
    assert captured.err.startswith(f"posbias {command}: error: {tmp_path / where.split(':')[0]}:")
    assert where in captured.err


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_a_missing_file_is_one_line_and_exit_2(tmp_path, capsys, command):
    args = [command, "--qrels", str(tmp_path / "nothing.txt"), "--run", _write(tmp_path / "a.run", EVAL_RUN)]
    args += ["--run", str(tmp_path / "a.run")] if command == "compare" else []
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"posbias {command}: error:") and "nothing.txt" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_a_rel_level_above_every_grade_is_warned_about(tmp_path, capsys, command):
    qrels = _write(tmp_path / "qrels.txt", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d4 1\n")
    run = _write(tmp_path / "a.run", "q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 1.0 t\nq2 Q0 d4 1 3.0 t\n")
    args = [command, "--qrels", qrels, "--run", run] + (["--run", run] if command == "compare" else [])
    assert main(args + ["--rel-level", "1"]) == 0
    assert capsys.readouterr().err == ""
    assert main(args + ["--rel-level", "2"]) == 0
    captured = capsys.readouterr()
    assert captured.err == (f"posbias {command}: warning: --rel-level 2 is above every grade in {qrels} (the highest "
                            f"is 1): no document counts as relevant, so RR, AP, P, R and other binary metrics are 0\n")
    if command == "evaluate":
        assert json.loads(captured.out)["RR@10"] == 0.0  # what the warning is about


def test_evaluate_unknown_metric_is_a_clear_error(tmp_path, capsys):
    args = ["evaluate", "--qrels", _write(tmp_path / "qrels.txt", EVAL_QRELS),
            "--run", _write(tmp_path / "a.run", EVAL_RUN), "--metric", "nDCG@10", "--metric", "MRR@ten"]
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("posbias evaluate: error: unknown metric 'MRR@ten'") and len(err.splitlines()) == 1


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


def test_compare_two_runs(tmp_path, capsys):
    import pytest

    # Rank of each query's one relevant document in run A and run B; None: not retrieved in the top 5.
    ranks = {"q01": (1, 2), "q02": (3, 1), "q03": ("tie", 2), "q04": (4, 5), "q05": (6, None), "q06": (None, None),
             "q07": (1, None), "q08": (2, 7), "q09": (None, 3), "q10": (None, 1), "q11": (5, 1), "q12": (1, "absent")}

    def lines(qid, rank, tag):
        if rank == "absent":
            return []
        if rank == "tie":  # rel listed first but tied with zz: trec_eval puts zz (docno descending) first
            docs = [("rel", 9.0), ("zz", 9.0)] + [(f"n{i}", 8.0 - i) for i in range(6)]
        else:
            docs = [(f"n{i}", 9.0 - i) for i in range(8)]
            if rank is not None:
                docs.insert(rank - 1, ("rel", 0.0))
                docs = [(doc, 20.0 - i) for i, (doc, _) in enumerate(docs)]
        return [f"{qid} Q0 {doc} {i + 1} {score} {tag}\n" for i, (doc, score) in enumerate(docs)]

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{qid} 0 rel 1\n{qid} 0 n0 0\n" for qid in ranks))
    run_a, run_b = tmp_path / "a.run", tmp_path / "b.run"
    run_a.write_text("".join(line for qid, (a, _) in ranks.items() for line in lines(qid, a, "A")))
    run_b.write_text("".join(line for qid, (_, b) in ranks.items() for line in lines(qid, b, "B")))
    argv = ["compare", "--qrels", str(qrels), "--run", str(run_a), "--run", str(run_b), "--k", "5",
            "--seed", "3", "--permutations", "500", "--json"]

    assert main(argv) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert "warning" in captured.err and "1 queries evaluated only for" in captured.err
    assert {"metric", "run_a", "run_b", "n_queries", "mean_a", "mean_b", "mean_difference", "ci95", "t_test",
            "wilcoxon_signed_rank", "randomisation", "effect_size", "wilcoxon_rank_sum", "outcomes",
            "unpaired_queries"} <= set(out)
    assert (out["metric"], out["run_a"], out["run_b"]) == ("RR@10", str(run_a), str(run_b))
    assert out["n_queries"] == 11 and out["unpaired_queries"] == {"only_in_a": 1, "only_in_b": 0}
    assert out["randomisation"]["permutations"] == 500 and out["randomisation"]["seed"] == 3
    # RR@10 over q01..q11 (q12 is not in run B): the tie puts q03's relevant document of run A at rank 2
    assert out["mean_a"] == pytest.approx((1 + 1 / 3 + 1 / 2 + 1 / 4 + 1 / 6 + 1 + 1 / 2 + 1 / 5) / 11)
    outcomes = out["outcomes"]
    assert outcomes["k"] == 5 and outcomes["n_queries"] == 11
    assert outcomes["counts"] == {"neither": 2, "only_a": 2, "only_b": 2, "both": 5}
    assert outcomes["both"]["esl_a"] == pytest.approx((1 + 3 + 2 + 4 + 5) / 5)
    assert outcomes["both"]["esl_b"] == pytest.approx((2 + 1 + 2 + 5 + 1) / 5)
    assert outcomes["binomial_p"] == 1.0

    assert main(argv) == 0  # the same seed gives the same randomisation p
    assert json.loads(capsys.readouterr().out)["randomisation"] == out["randomisation"]

    assert main(argv[:-1]) == 0  # without --json: the same numbers as a summary table
    text = capsys.readouterr().out
    rows = {line.split("  ")[0].strip(): line.split() for line in text.splitlines() if "  " in line}
    assert rows["mean"][1:4] == [f"{out['mean_a']:.4f}", f"{out['mean_b']:.4f}", f"{out['mean_difference']:.4f}"]
    assert rows["t-test"][-1] == f"{out['t_test']['p']:.4f}"
    assert rows["randomisation (500 sign flips, seed 3)"][-1] == f"{out['randomisation']['p']:.4f}"
    assert rows["only A"][-2:] == ["2", "18.2%"] and rows["both"][-2:] == ["5", "45.5%"]
    assert "11 queries evaluated for both; left out: 1 evaluated only for A, 0 only for B" in text
    assert "mean rank of the first relevant document: A 3.00, B 2.20" in text

    with pytest.raises(SystemExit) as exit_info:
        main(["compare", "--qrels", str(qrels), "--run", str(run_a)])
    assert exit_info.value.code == 2
    assert "--run must be given exactly twice" in capsys.readouterr().err


def test_compare_a_run_with_itself_has_no_test(tmp_path, capsys):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "a.run"
    qrels.write_text("".join(f"q{i} 0 rel 1\n" for i in range(4)))
    run.write_text("".join(f"q{i} Q0 {doc} {r + 1} {9 - r} A\n" for i in range(4)
                           for r, doc in enumerate(["n0", "rel"] if i % 2 else ["rel", "n0"])))
    argv = ["compare", "--qrels", str(qrels), "--run", str(run), "--run", str(run), "--k", "5", "--permutations", "99"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # every query ties: no p at all (null), never p = 1
    assert out["t_test"]["p"] is None and out["wilcoxon_signed_rank"]["p"] is None
    assert out["randomisation"]["p"] is None and out["outcomes"]["binomial_p"] is None
    assert main(argv) == 0
    text = capsys.readouterr().out
    rows = {line.split("  ")[0].strip(): line for line in text.splitlines() if "  " in line}
    assert rows["t-test"].endswith("no test") and rows["Wilcoxon signed-rank"].endswith("no test")
    assert "only A against only B (binomial test): no test" in text
    assert "(Wilcoxon no test, t-test no test)" in text
