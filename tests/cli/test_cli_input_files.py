"""Input files a command cannot use: each is one line naming the file (and line), exit status 2, and no output
left behind."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from pathlib import Path

import pytest

from cli_files import DOCS, QRELS, RUN, listing, write
from posbias.cli import main

OFFLINE = "offline:all-MiniLM-L6-v2"
CONFIG = Path(__file__).resolve().parents[2] / "config.yaml"  # the embedded default, with a hybrid retriever


def evaluate(tmp_path, qrels: str, run: str, *extra) -> list[str]:
    return ["evaluate", "--qrels", write(tmp_path / "qrels.txt", qrels), "--run", write(tmp_path / "a.run", run),
            *extra]


def compare(tmp_path, qrels: str, run: str) -> list[str]:
    path = write(tmp_path / "a.run", run)
    return ["compare", "--qrels", write(tmp_path / "qrels.txt", qrels), "--run", path, "--run", path]


@pytest.mark.parametrize("score", ["nan", "NaN", "inf", "-Infinity"])
@pytest.mark.parametrize("command", [evaluate, compare])
def test_a_score_that_is_not_finite_names_the_run_and_line(tmp_path, input_error, command, score):
    message = input_error(command(tmp_path, QRELS, RUN.replace("1.0", score)))
    assert message == f"{tmp_path / 'a.run'}:2: score '{score}' is not a finite number"


@pytest.mark.parametrize("command", [evaluate, compare])
def test_an_empty_qrels_or_run_is_an_error_naming_it(tmp_path, input_error, command):
    assert input_error(command(tmp_path, "", RUN)) == f"{tmp_path / 'qrels.txt'}: no judgments: the file is empty"
    assert input_error(command(tmp_path, QRELS, "\n\n")) == f"{tmp_path / 'a.run'}: no results: the file is empty"


@pytest.mark.parametrize("command", [evaluate, compare])
def test_a_run_without_a_judged_query_is_an_error(tmp_path, input_error, command):
    message = input_error(command(tmp_path, QRELS, "q7 Q0 d1 1 1.0 t\nq8 Q0 d1 1 1.0 t\n"))
    assert message == f"{tmp_path / 'a.run'}: none of its 2 queries is judged in {tmp_path / 'qrels.txt'}"


@pytest.mark.parametrize("suffix,opener", [(".gz", gzip), (".bz2", bz2), (".xz", lzma)])
def test_a_truncated_compressed_file_is_named(tmp_path, input_error, suffix, opener):
    packed = opener.compress("".join(f"q1 0 d{i} 1\n" for i in range(20000)).encode())
    (tmp_path / f"qrels.txt{suffix}").write_bytes(packed[:len(packed) // 2])
    run = write(tmp_path / "a.run", RUN)
    message = input_error(["evaluate", "--qrels", tmp_path / f"qrels.txt{suffix}", "--run", run])
    assert message.startswith(f"{tmp_path / f'qrels.txt{suffix}'}: the ")
    assert "data ends early: the file is truncated" in message


@pytest.mark.parametrize("suffix,kind", [(".gz", "gzip"), (".bz2", "bzip2"), (".xz", "xz")])
def test_plain_text_named_as_compressed_is_named(tmp_path, input_error, suffix, kind):
    (tmp_path / f"a.run{suffix}").write_text(RUN)  # plain text under a compressed name
    message = input_error(["evaluate", "--qrels", write(tmp_path / "qrels.txt", QRELS),
                           "--run", tmp_path / f"a.run{suffix}"])
    assert message.startswith(f"{tmp_path / f'a.run{suffix}'}: not valid {kind} data")
    assert message.endswith(f"is the file {kind}-compressed, as its name says?")


def test_a_compressed_file_without_its_suffix_is_named_with_a_hint(tmp_path, input_error):
    (tmp_path / "qrels.txt").write_bytes(gzip.compress(QRELS.encode()))
    message = input_error(["evaluate", "--qrels", tmp_path / "qrels.txt", "--run", write(tmp_path / "a.run", RUN)])
    assert message.startswith(f"{tmp_path / 'qrels.txt'}:1: byte 0x")
    assert message.endswith("the file is gzip-compressed, so its name should end in .gz")


def test_bytes_that_are_not_utf8_are_named_by_file_and_line(tmp_path, input_error):
    lines = "".join(f"q1 0 d{i} 0\n" for i in range(3000)).encode()  # the bad byte lies beyond the first read
    qrels = write(tmp_path / "qrels.txt.gz", lines + b"q2 0 d\xe9 1\n")
    message = input_error(["evaluate", "--qrels", qrels, "--run", write(tmp_path / "a.run", RUN)])
    assert message == f"{qrels}:3001: byte 0xe9 is not UTF-8 text"


@pytest.mark.parametrize("command", [evaluate, compare])
def test_a_nul_byte_means_a_binary_file(tmp_path, input_error, command):
    message = input_error(command(tmp_path, QRELS, RUN.replace("d1 2", "d1\0 2")))
    assert message == f"{tmp_path / 'a.run'}:2: a NUL byte: this is a binary file, not text"


@pytest.mark.parametrize("docs,where", [
    ('{"id": "d1", "text": "one"}\n{"id": "d2", "text": "two"\n', ":2: invalid JSON"),
    ('{"id": "d1", "text": "one"}\n["d2", "two"]\n', ":2: expected a JSON object"),
    ('{"id": "d1", "text": "one"}\n\n{"id": "d3"}\n', ':3: expected an object with "id" and "text"'),
    ('{"id": "d1", "text": null}\n', ':1: "text" of document d1 must be a string, not None'),
    ('{"id": "", "text": "one"}\n', ':1: "id" must be a non-empty string'),
    (b'{"id": "d1", "text": "one"}\n\x00\x01\x02\n', ":2: a NUL byte"),
    (b'{"id": "d1", "text": "\xff\xfe"}\n', ":1: byte 0xff is not UTF-8 text"),
])
@pytest.mark.parametrize("command", ["truncate", "tokenize"])
def test_a_bad_document_line_is_named_and_nothing_is_written(tmp_path, input_error, command, docs, where):
    path = write(tmp_path / "docs.jsonl", docs)
    argv = [command, "--docs", path, "--out", tmp_path / "out", "--tokenizer", OFFLINE]
    argv += ["--max-tokens", "3"] if command == "truncate" else ["--cap", "3"]
    assert input_error(argv).startswith(f"{path}{where}")
    assert listing(tmp_path) == ["docs.jsonl"]  # no output file or directory, no hidden staging copy


@pytest.mark.parametrize("command", ["truncate", "tokenize", "dense-index"])
def test_an_empty_document_file_is_an_error(tmp_path, input_error, command):
    path = write(tmp_path / "docs.jsonl", "\n")
    argv = {"truncate": ["--out", tmp_path / "out", "--tokenizer", OFFLINE, "--max-tokens", "3"],
            "tokenize": ["--out", tmp_path / "out", "--tokenizer", OFFLINE],
            "dense-index": ["--config", CONFIG, "--retriever", "hybrid", "--index", tmp_path / "out"]}
    message = input_error([command, "--docs", path, *argv[command]])
    assert message.startswith(f"{path}: no documents") and message.endswith("the file is empty")
    assert listing(tmp_path) == ["docs.jsonl"]


@pytest.mark.parametrize("queries,where", [
    ("q1\tcapital\nq2 tallest mountain\n", ":2: expected 'qid<TAB>text'"),
    ("q1\tcapital\n\tno id\n", ":2: expected 'qid<TAB>text'"),
    ("q1\tcapital\nq1\tagain\n", ":2: query q1 is listed twice"),
    ("\n", ": no queries: the file is empty"),
])
def test_a_bad_queries_file_is_named_before_any_search(tmp_path, input_error, queries, where):
    (tmp_path / "index").mkdir()
    path = write(tmp_path / "q.tsv", queries)
    message = input_error(["retrieve", "--index", tmp_path / "index", "--queries", path, "--run", tmp_path / "x.run"])
    assert message.startswith(f"{path}{where}")
    assert not (tmp_path / "x.run").exists()


def test_a_partly_written_output_is_never_left_behind(tmp_path, input_error):
    """The error comes at the 300th document, after the first batches were written to the output."""
    good = "".join(json.dumps({"id": f"d{i}", "text": f"word {i}"}) + "\n" for i in range(299))
    path = write(tmp_path / "docs.jsonl", good + '{"id": "d299"}\n')
    message = input_error(["truncate", "--docs", path, "--out", tmp_path / "cut.jsonl", "--tokenizer", OFFLINE,
                           "--max-tokens", "3"])
    assert message.startswith(f"{path}:300:")
    assert listing(tmp_path) == ["docs.jsonl"]


def test_a_good_file_still_reads(tmp_path, capsys):
    """The checks above refuse bad files only: the same small files, well formed, evaluate."""
    assert main(evaluate(tmp_path, QRELS, RUN, "--metric", "RR@10")) == 0
    assert json.loads(capsys.readouterr().out) == {"RR@10": 0.75, "n_queries": 2}
    assert main(["truncate", "--docs", write(tmp_path / "docs.jsonl", DOCS), "--out", str(tmp_path / "cut.jsonl"),
                 "--tokenizer", OFFLINE, "--max-tokens", "2"]) == 0
    assert (tmp_path / "cut.jsonl").read_text().count("\n") == 2


def test_an_output_that_cannot_be_written_is_named(tmp_path, input_error):
    (tmp_path / "out").mkdir()  # a directory where the command writes a file
    docs = write(tmp_path / "docs.jsonl", DOCS)
    message = input_error(["truncate", "--docs", docs, "--out", tmp_path / "out", "--tokenizer", OFFLINE,
                           "--max-tokens", "2"])
    assert message == f"{tmp_path / 'out'}: Is a directory"  # the output's name, not its hidden temporary's
    assert listing(tmp_path) == ["docs.jsonl", "out"]


def test_dense_index_leaves_no_index_after_a_bad_line(tmp_path, input_error):
    docs = write(tmp_path / "docs.jsonl", DOCS + '{"id": "d3", "text": 3}\n')
    message = input_error(["dense-index", "--config", CONFIG, "--retriever", "hybrid", "--docs", docs,
                           "--index", tmp_path / "dense"])
    assert message == f'{docs}:3: "text" of document d3 must be a string, not 3'
    assert listing(tmp_path) == ["docs.jsonl"]
