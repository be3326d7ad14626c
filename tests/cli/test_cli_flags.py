"""Numeric flags out of range, and flags argparse cannot check alone, are refused by the argument parser with
a message naming the flag (usage and exit status 2), before any file is read."""

from __future__ import annotations

import pytest

from posbias.cli import main

# The flags of each command that need inputs; none of these files has to exist, argparse refuses first.
BASE = {
    "truncate": ["--docs", "d.jsonl", "--out", "o.jsonl", "--tokenizer", "t", "--max-tokens", "3"],
    "index": ["--docs", "d.jsonl", "--index", "idx"],
    "dense-index": ["--config", "c.yaml", "--retriever", "h", "--docs", "d.jsonl", "--index", "dense"],
    "hybrid": ["--config", "c.yaml", "--retriever", "h", "--dense", "dense", "--index", "idx", "--queries", "q.tsv",
               "--run", "r.run"],
    "retrieve": ["--index", "idx", "--queries", "q.tsv", "--run", "r.run"],
    "tokenize": ["--docs", "d.jsonl", "--out", "tokens", "--tokenizer", "t"],
    "train": ["--model", "m", "--seed", "1", "--tokens", "tokens", "--queries", "q.tsv", "--qrels", "qrels.txt",
              "--candidates", "c.run", "--out", "ckpt"],
    "rerank": ["--checkpoint", "ckpt", "--tokens", "tokens", "--queries", "q.tsv", "--candidates", "c.run",
               "--run", "r.run"],
    "evaluate": ["--qrels", "qrels.txt", "--run", "r.run"],
    "compare": ["--qrels", "qrels.txt", "--run", "a.run", "--run", "b.run"],
}

POSITIVE_FLAGS = [("truncate", "--max-tokens"), ("index", "--threads"), ("dense-index", "--threads"),
                  ("hybrid", "--depth"), ("hybrid", "--threads"), ("retrieve", "--depth"), ("retrieve", "--threads"),
                  ("tokenize", "--cap"), ("tokenize", "--threads"), ("train", "--threads"), ("rerank", "--batch-size"),
                  ("rerank", "--threads"), ("evaluate", "--rel-level"), ("compare", "--k"),
                  ("compare", "--permutations"), ("compare", "--rel-level")]


@pytest.mark.parametrize("value", ["0", "-3"])
@pytest.mark.parametrize("command,flag", POSITIVE_FLAGS)
def test_sizes_and_counts_must_be_positive(usage_error, command, flag, value):
    assert usage_error([command, *BASE[command], flag, value]) == \
        f"argument {flag}: must be an integer at least 1, got {value}"


@pytest.mark.parametrize("command,flag", POSITIVE_FLAGS[:3])
def test_a_count_must_be_an_integer(usage_error, command, flag):
    assert usage_error([command, *BASE[command], flag, "2.5"]) == f"argument {flag}: '2.5' is not an integer"


@pytest.mark.parametrize("command", ["train", "compare"])
@pytest.mark.parametrize("value", ["-1", str(2**32)])
def test_a_seed_is_a_32_bit_unsigned_integer(usage_error, command, value):
    assert usage_error([command, *BASE[command], "--seed", value]) == \
        f"argument --seed: must be an integer from 0 to {2**32 - 1}, got {value}"


@pytest.mark.parametrize("flag,value,span", [("--k1", "0", "(0, inf)"), ("--k1", "nan", "(0, inf)"),
                                             ("--b", "1.5", "[0, 1]"), ("--b", "-0.1", "[0, 1]")])
def test_bm25_parameters_in_range(usage_error, flag, value, span):
    assert usage_error(["retrieve", *BASE["retrieve"], flag, value]) == \
        f"argument {flag}: must be a number in {span}, got {value}"


def test_a_run_tag_is_one_word(usage_error):
    assert usage_error(["rerank", *BASE["rerank"], "--tag", "my run"]) == \
        "argument --tag: must be one non-empty word (a run's last column), got 'my run'"


@pytest.mark.parametrize("runs", [1, 3])
def test_compare_takes_exactly_two_runs(usage_error, runs):
    argv = ["compare", "--qrels", "qrels.txt", *["--run", "r.run"] * runs]
    assert usage_error(argv) == f"--run must be given exactly twice (run A, run B), not {runs} times"


def test_in_range_values_pass_the_parser(tmp_path, monkeypatch, input_error):
    """The same flags in range get past the parser: the command fails later, on its missing input."""
    monkeypatch.chdir(tmp_path)
    message = input_error(["retrieve", *BASE["retrieve"], "--depth", "1", "--threads", "2", "--k1", "1.2", "--b", "0"])
    assert message == "--index idx: no such directory"


def test_a_bug_is_not_reported_as_an_input_error(monkeypatch, tmp_path):
    """Only input errors become exit status 2: anything else keeps its traceback."""
    from posbias.retrieval import steps as retrieval

    def broken(*args):
        raise KeyError("a bug")

    monkeypatch.setattr(retrieval, "retrieve", broken)
    (tmp_path / "idx").mkdir()
    (tmp_path / "q.tsv").write_text("q1\tx\n")
    with pytest.raises(KeyError, match="a bug"):
        main(["retrieve", "--index", str(tmp_path / "idx"), "--queries", str(tmp_path / "q.tsv"),
              "--run", str(tmp_path / "r.run")])
