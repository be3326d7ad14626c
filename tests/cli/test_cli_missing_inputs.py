"""Inputs that are missing, incomplete or do not fit together: a missing file or directory, a document absent
from a token store, an incomplete checkpoint, token store or index. Each is one line naming it, exit status 2,
and no output left behind."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from cli_files import DOCS, QRELS, QUERIES, RUN, listing, write

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = "offline:all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def ranker_inputs(tmp_path_factory, tiny_backbone):
    """A tiny collection with its token store, queries, qrels, candidates, a config naming one tiny model
    (`maxp`), and an untrained checkpoint of that model (`ckpt`)."""
    from posbias.backbones import load_tokenizer
    from posbias.data.token_store import build_token_store
    from posbias.rankers.checkpoint import save_checkpoint
    from posbias.rankers.registry import build_ranker

    root = tmp_path_factory.mktemp("ranker-inputs")
    write(root / "docs.jsonl", DOCS + '{"id": "d3", "text": "mount kel is the tallest mountain"}\n')
    build_token_store(root / "docs.jsonl", root / "tokens", tiny_backbone, 32, progress=False)
    write(root / "queries.tsv", QUERIES)
    write(root / "qrels.txt", QRELS)
    write(root / "candidates.run", RUN)
    args = dict(backbone=tiny_backbone, max_query_tokens=6, chunk_tokens=8, stride=8, max_doc_tokens=24)
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    config["models"] = {
        "firstp": {"label": "FirstP", "ranker": "firstp", "baseline": "firstp", "lr": 1e-3, "head_lr": 1e-2,
                   "args": {**args, "max_doc_tokens": 8}},
        "maxp": {"label": "MaxP", "ranker": "maxp", "baseline": "firstp", "lr": 1e-3, "head_lr": 1e-2, "args": args}}
    config["tables"] = {"table1": {"columns": [{"queryset": "dev", "metric": "RR@10"}]}}  # the two models only
    config.pop("probes")  # its checkpoint scorers name models this config leaves out
    config.pop("audit")  # so does its trained model
    config["training"].update(epochs=1, batch_size=2, device="cpu", freeze_layers=0)
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    save_checkpoint(build_ranker("maxp", args), load_tokenizer(tiny_backbone), root / "ckpt")
    return root


def rerank(root: Path, out: Path, **replaced) -> list:
    inputs = {"checkpoint": root / "ckpt", "tokens": root / "tokens", "queries": root / "queries.tsv",
              "candidates": root / "candidates.run", **replaced}
    return ["rerank", *[item for flag, path in inputs.items() for item in (f"--{flag}", path)], "--run", out / "x.run"]


def train(root: Path, out: Path, model: str = "maxp", **replaced) -> list:
    inputs = {"tokens": root / "tokens", "queries": root / "queries.tsv", "qrels": root / "qrels.txt",
              "candidates": root / "candidates.run", **replaced}
    return ["train", "--config", root / "config.yaml", "--model", model, "--seed", "1",
            *[item for flag, path in inputs.items() for item in (f"--{flag}", path)], "--out", out / "ckpt"]


@pytest.mark.parametrize("argv,flag", [
    (["evaluate", "--qrels", "{missing}", "--run", "{file}"], "--qrels"),
    (["compare", "--qrels", "{file}", "--run", "{file}", "--run", "{missing}"], "--run"),
    (["retrieve", "--index", "{dir}", "--queries", "{missing}", "--run", "{out}"], "--queries"),
    (["retrieve", "--index", "{missing}", "--queries", "{file}", "--run", "{out}"], "--index"),
    (["hybrid", "--config", "c.yaml", "--retriever", "h", "--dense", "{missing}", "--index", "{dir}",
      "--queries", "{file}", "--run", "{out}"], "--dense"),
    (["truncate", "--docs", "{missing}", "--out", "{out}", "--tokenizer", OFFLINE, "--max-tokens", "3"], "--docs"),
    (["tokenize", "--docs", "{missing}", "--out", "{out}", "--tokenizer", OFFLINE], "--docs"),
    (["index", "--docs", "{missing}", "--index", "{out}"], "--docs"),
    (["index", "--docs", "{file}", "--index", "{out}", "--expansions", "{missing}"], "--expansions"),
    (["dense-index", "--config", "c.yaml", "--retriever", "h", "--docs", "{missing}", "--index", "{out}"], "--docs"),
    (["farrelevant", "--passages", "{missing}", "--queries", "{file}", "--qrels", "{file}", "--out", "{out}"],
     "--passages"),
    (["train", "--model", "m", "--seed", "1", "--tokens", "{dir}", "--queries", "{file}", "--qrels", "{file}",
      "--candidates", "{missing}", "--out", "{out}"], "--candidates"),
    (["rerank", "--checkpoint", "{missing}", "--tokens", "{dir}", "--queries", "{file}", "--candidates", "{file}",
      "--run", "{out}"], "--checkpoint"),
    (["rerank", "--checkpoint", "{dir}", "--tokens", "{missing}", "--queries", "{file}", "--candidates", "{file}",
      "--run", "{out}"], "--tokens"),
])
def test_a_missing_input_names_its_flag_before_any_work(tmp_path, input_error, argv, flag):
    paths = {"missing": tmp_path / "nowhere", "file": write(tmp_path / "f.txt", QRELS), "dir": tmp_path / "d",
             "out": tmp_path / "out"}
    (tmp_path / "d").mkdir()
    message = input_error([item.format(**paths) for item in argv])
    kind = "directory" if flag in ("--index", "--dense", "--checkpoint", "--tokens") else "file"
    assert message == f"{flag} {tmp_path / 'nowhere'}: no such {kind}"
    assert listing(tmp_path) == ["d", "f.txt"]


def test_a_directory_where_a_file_belongs_and_the_reverse(tmp_path, input_error):
    (tmp_path / "d").mkdir()
    file = write(tmp_path / "f.txt", QRELS)
    message = input_error(["evaluate", "--qrels", tmp_path / "d", "--run", file])
    assert message == f"--qrels {tmp_path / 'd'}: not a file"
    message = input_error(["retrieve", "--index", file, "--queries", file, "--run", tmp_path / "x.run"])
    assert message == f"--index {file}: not a directory"


def test_a_directory_that_is_not_a_lucene_index(tmp_path, input_error):
    (tmp_path / "index").mkdir()
    queries = write(tmp_path / "q.tsv", QUERIES)
    message = input_error(["retrieve", "--index", tmp_path / "index", "--queries", queries,
                           "--run", tmp_path / "x.run"])
    assert message == f"{tmp_path / 'index'} is not a Lucene index: it has no segments_N file"
    assert not (tmp_path / "x.run").exists()


def test_hybrid_checks_both_indexes_before_encoding(tmp_path, input_error):
    (tmp_path / "dense").mkdir()
    (tmp_path / "lucene").mkdir()
    (tmp_path / "lucene" / "segments_1").write_bytes(b"")  # looks like an index: the dense one is checked next
    argv = ["hybrid", "--config", ROOT / "config.yaml", "--retriever", "hybrid", "--dense", tmp_path / "dense",
            "--index", tmp_path / "lucene", "--queries", write(tmp_path / "q.tsv", QUERIES),
            "--run", tmp_path / "x.run"]
    assert input_error(argv) == f"{tmp_path / 'dense'} is not a saved FAISS index: metadata.json missing"
    (tmp_path / "lucene" / "segments_1").unlink()
    assert input_error(argv) == f"{tmp_path / 'lucene'} is not a Lucene index: it has no segments_N file"
    assert not (tmp_path / "x.run").exists()


def test_rerank_refuses_a_missing_incomplete_or_damaged_checkpoint(ranker_inputs, tmp_path, input_error):
    broken = tmp_path / "broken"
    shutil.copytree(ranker_inputs / "ckpt", broken)
    (broken / "ranker.pt").unlink()
    assert input_error(rerank(ranker_inputs, tmp_path, checkpoint=broken)) == \
        f"{broken} is not a posbias checkpoint: ranker.pt missing"
    (broken / "ranker.pt").write_bytes(b"not a tensor file")
    assert input_error(rerank(ranker_inputs, tmp_path, checkpoint=broken)).startswith(
        f"{broken / 'ranker.pt'}: not the state of a maxp ranker (")
    (broken / "ranker.json").write_text('{"name": "maxp",\n "args": }\n')
    assert input_error(rerank(ranker_inputs, tmp_path, checkpoint=broken)).startswith(
        f"{broken / 'ranker.json'}:2: invalid JSON")
    shutil.rmtree(broken / "backbone")
    (broken / "backbone").mkdir()
    (broken / "ranker.json").write_text((ranker_inputs / "ckpt" / "ranker.json").read_text())
    assert input_error(rerank(ranker_inputs, tmp_path, checkpoint=broken)).startswith(
        f"cannot load the backbone {str(broken / 'backbone')!r}: ")
    assert listing(tmp_path) == ["broken"]


def test_rerank_names_what_the_candidates_lack(ranker_inputs, tmp_path, input_error):
    candidates = write(tmp_path / "cand.run", RUN + "q1 Q0 d9 3 0.5 t\n")
    message = input_error(rerank(ranker_inputs, tmp_path, candidates=candidates))
    assert message.startswith(f"1 candidate documents of {candidates} are not in the token store "
                              f"{ranker_inputs / 'tokens'}") and "e.g. ['d9']" in message
    candidates = write(tmp_path / "cand.run", RUN + "q5 Q0 d1 1 0.5 t\n")
    assert input_error(rerank(ranker_inputs, tmp_path, candidates=candidates)) == \
        f"1 queries of {candidates} have no text, e.g. ['q5']"
    candidates = write(tmp_path / "cand.run", "")
    assert input_error(rerank(ranker_inputs, tmp_path, candidates=candidates)) == \
        f"{candidates}: no candidates: the file is empty"
    assert listing(tmp_path) == ["cand.run"]  # no run, no <run>.json


def test_rerank_refuses_a_directory_that_is_not_a_token_store(ranker_inputs, tmp_path, input_error):
    (tmp_path / "tokens").mkdir()
    (tmp_path / "tokens" / "meta.json").write_text("{}")
    message = input_error(rerank(ranker_inputs, tmp_path, tokens=tmp_path / "tokens"))
    assert message == (f"{tmp_path / 'tokens'} is not a token store: tokens.bin, keys.npy, starts.npy, counts.npy, "
                       f"lengths.npy missing (build one with `posbias tokenize`)")


def test_rerank_refuses_an_unknown_device(ranker_inputs, tmp_path, input_error):
    message = input_error([*rerank(ranker_inputs, tmp_path), "--device", "gpu0"])
    assert message == "device 'gpu0' is not a torch device such as cpu, cuda or cuda:1"


def test_train_names_what_its_inputs_lack_and_writes_no_checkpoint(ranker_inputs, tmp_path, input_error):
    candidates = write(tmp_path / "cand.run", RUN + "q2 Q0 d9 2 0.5 t\n")
    message = input_error(train(ranker_inputs, tmp_path, candidates=candidates))
    assert message.startswith(f"1 candidate documents of {candidates} are not in the token store")
    qrels = write(tmp_path / "qrels.txt", "")
    assert input_error(train(ranker_inputs, tmp_path, qrels=qrels)) == f"{qrels}: no judgments: the file is empty"
    qrels = write(tmp_path / "qrels.txt", "q3 0 d1 1\n")
    assert input_error(train(ranker_inputs, tmp_path, qrels=qrels)) == \
        f"1 judged training queries are not in {ranker_inputs / 'queries.tsv'}, e.g. ['q3']"
    queries = write(tmp_path / "q.tsv", QUERIES + "q3\tunseen\n")
    assert input_error(train(ranker_inputs, tmp_path, qrels=qrels, queries=queries)) == \
        f"{ranker_inputs / 'candidates.run'}: no candidates for any of the 1 judged training queries"
    assert listing(tmp_path) == ["cand.run", "q.tsv", "qrels.txt"]  # no checkpoint, no resume state


def test_train_names_an_unknown_model(ranker_inputs, tmp_path, input_error):
    message = input_error(train(ranker_inputs, tmp_path, model="maxq"))
    assert message == f"--model maxq: {ranker_inputs / 'config.yaml'} has no models.maxq; known: firstp, maxp"


def test_farrelevant_names_a_relevant_passage_missing_from_the_passages(tmp_path, input_error):
    passages = write(tmp_path / "passages.jsonl", DOCS)
    qrels = write(tmp_path / "qrels.txt", "q1 0 d1 1\nq2 0 p7 1\nq2 0 p8 0\n")
    message = input_error(["farrelevant", "--config", ROOT / "config.yaml", "--passages", passages,
                           "--queries", write(tmp_path / "q.tsv", QUERIES), "--qrels", qrels,
                           "--out", tmp_path / "out"])
    assert message == f"{qrels}: 1 relevant passages are not in {passages}, e.g. ['p7']"
    assert listing(tmp_path) == ["passages.jsonl", "q.tsv", "qrels.txt"]


def test_an_index_is_not_left_half_built(tmp_path, input_error):
    """A bad line after the first documents: Lucene has started writing, but no index (or staging) remains."""
    docs = write(tmp_path / "docs.jsonl", DOCS + '{"id": "d3"}\n')
    assert input_error(["index", "--docs", docs, "--index", tmp_path / "index"]) == \
        f'{docs}:3: expected an object with "id" and "text"'
    empty = write(tmp_path / "empty.jsonl", "")
    assert input_error(["index", "--docs", empty, "--index", tmp_path / "index"]) == \
        f"{empty}: no documents to index: the file is empty"
    assert listing(tmp_path) == ["docs.jsonl", "empty.jsonl"]


@pytest.mark.parametrize("command", ["truncate", "tokenize"])
def test_a_tokenizer_that_cannot_be_loaded_is_named(tmp_path, input_error, command):
    docs = write(tmp_path / "docs.jsonl", DOCS)
    (tmp_path / "empty-model").mkdir()
    for name, reason in ((tmp_path / "no-model", "no such directory"), (tmp_path / "empty-model", "")):
        argv = [command, "--docs", docs, "--out", tmp_path / "out", "--tokenizer", name]
        message = input_error(argv + (["--max-tokens", "3"] if command == "truncate" else []))
        assert message.startswith(f"cannot load the tokenizer {str(name)!r}: {reason}")
    assert listing(tmp_path) == ["docs.jsonl", "empty-model"]


def test_fetch_names_a_missing_or_unreadable_local_source(tmp_path, input_error):
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    config["collections"] = {"mine": {"documents": {"kind": "local", "path": str(tmp_path / "docs.jsonl")}},
                             "odd": {"documents": {"kind": "local", "path": str(tmp_path / "docs.txt")}}}
    path = write(tmp_path / "config.yaml", yaml.safe_dump(config))
    fetch = ["fetch", "--config", path, "--out", tmp_path / "out.jsonl", "--collection"]
    assert input_error([*fetch, "mine"]) == f"{tmp_path / 'docs.jsonl'}: No such file or directory"
    write(tmp_path / "docs.txt", DOCS)
    assert input_error([*fetch, "odd"]).startswith(f"{tmp_path / 'docs.txt'}: cannot tell the format from the name")
    assert listing(tmp_path) == ["config.yaml", "docs.txt"]
