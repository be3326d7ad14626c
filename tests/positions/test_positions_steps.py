"""The positions steps on small files in the real formats: sparse matching (with a real Lucene index), dense
judging through the response cache with the mock oracle, and the report with the agreement against a truth file."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from posbias.errors import InputError
from posbias.io import write_documents, write_qrels, write_queries
from posbias.data.answer_passages import read_truth
from posbias.positions import steps
from posbias.positions.jobs import DenseJob, Judge, QuerySetFiles, ReportJob, SetOutputs, SparseJob
from posbias.positions.paths import report_paths

FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore."
ANSWER = "the capital of freedonia is fredville."
OTHER = "the river of sylvania is the long blue water."
DOCS = [
    {"id": "d1", "text": f"{FILLER} {ANSWER} {FILLER}"},          # the answer at token 15
    {"id": "d2", "text": f"{ANSWER} {FILLER}"},                   # at 0; not judged, found by BM25
    {"id": "d3", "text": f"{FILLER} {FILLER} {FILLER} {OTHER}"},  # the other query's, at token 45
    {"id": "d4", "text": f"{FILLER} {FILLER}"},                   # nothing
]
SETTINGS = {"tokenizer": "whitespace", "bin_tokens": 16, "max_bin": 4,
            "matching": {"substring_min": 0.8, "subsequence_min": 0.7, "window": 1.2, "step": 0.1,
                         "bm25_depth": 2, "retriever": "bm25"},
            "dense": {"judge": "oracle", "chunk_tokens": 16, "max_chunks": 8, "length_slack": 2, "max_new_tokens": 8}}


@pytest.fixture()
def files(tmp_path):
    write_documents(tmp_path / "docs.jsonl", DOCS)
    write_queries(tmp_path / "queries.tsv", {"q1": "capital of freedonia", "q2": "river of sylvania",
                                             "q3": "nothing judged"})
    write_qrels(tmp_path / "qrels.txt", {"q1": {"d1": 1, "d4": 0}, "q2": {"d3": 2, "d4": 1}})
    write_documents(tmp_path / "passages.jsonl", [{"id": "p1", "text": ANSWER.upper()}, {"id": "p2", "text": OTHER}])
    write_qrels(tmp_path / "passage_qrels.txt", {"q1": {"p1": 1}, "q2": {"p2": 1}})
    (tmp_path / "truth.tsv").write_text("qid\tdoc_id\tpassage_id\tstart\nq1\td1\tp1\t15\nq2\td3\tp2\t45\n")
    return tmp_path


def query_set(files) -> QuerySetFiles:
    return QuerySetFiles(str(files / "docs.jsonl"), str(files / "queries.tsv"), str(files / "qrels.txt"))


def test_sparse_positions_from_judged_and_retrieved_documents(files):
    from posbias.retrieval.bm25 import build_index

    build_index(str(files / "docs.jsonl"), str(files / "lucene"))
    out = files / "out"
    steps.sparse(SparseJob({"kind": "sparse"}, SETTINGS, query_set(files), str(files / "passages.jsonl"),
                           str(files / "passage_qrels.txt"), SetOutputs(str(out / "dev.tsv"), str(out / "dev.json")),
                           index=str(files / "lucene"), retriever={"k1": 0.9, "b": 0.4}))
    rows = steps.read_rows(str(out / "dev.tsv")).set_index(["qid", "doc_id"])
    assert rows.loc[("q1", "d1"), ["position", "position_bin", "source", "stage"]].tolist() == [15, 0, "judged",
                                                                                             "substring"]
    assert rows.loc[("q1", "d2"), ["position", "source"]].tolist() == [0, "retrieved"]
    assert rows.loc[("q2", "d3"), ["position", "position_bin"]].tolist() == [45, 2]
    assert rows.loc[("q2", "d4"), ["position", "position_bin"]].tolist() == [-1, -1]  # judged, unmatched
    summary = json.loads((out / "dev.json").read_text())
    assert summary["queries"] == 3 and summary["matched_queries"] == 2


def test_dense_positions_are_judged_once_and_replayed_from_the_cache(files):
    judge = {"backend": "mock", "model": "oracle"}
    cache = {"dir": str(files / "cache"), "mode": "read_write"}
    out = files / "out"

    def run():
        steps.dense(DenseJob({"kind": "dense", "seed": 0}, SETTINGS, Judge(judge, "oracle", cache), query_set(files),
                             SetOutputs(str(out / "test.tsv"), str(out / "test.json"),
                                        str(out / "test.judgments.parquet")),
                             passages=str(files / "passages.jsonl"), passage_qrels=str(files / "passage_qrels.txt")))
        return steps.read_rows(str(out / "test.tsv")).set_index(["qid", "doc_id"]), json.loads(
            (out / "test.json").read_text())

    rows, summary = run()
    assert rows.loc[("q1", "d1"), ["position_bin", "position"]].tolist() == [1, 15]  # after the first sentence
    assert rows.loc[("q2", "d3"), "first_chunk"] == 3
    assert rows.loc[("q2", "d4"), "position_bin"] == -1  # judged relevant, no chunk holds the passage
    assert ("q1", "d4") not in rows.index  # grade 0: not a pair
    assert rows.loc[("q1", "d1"), "length_bin"] == (2 + 36) // 16
    assert summary["cache_hits"] == 0 and summary["unparseable"] == 0
    _, again = run()
    assert again["cache_hits"] == again["judge_calls"] == summary["judge_calls"]
    judgments = pd.read_parquet(out / "test.judgments.parquet")
    assert set(judgments["grade"].dropna()) == {0, 3}


def test_an_echoing_judge_is_unparseable_and_counted(files):
    out = files / "out"
    judge = Judge({"backend": "mock", "model": "echo"}, "echo", {"dir": str(files / "cache"), "mode": "read_write"})
    steps.dense(DenseJob({"kind": "dense", "pairs": 1}, SETTINGS, judge, query_set(files),
                         SetOutputs(str(out / "e.tsv"), str(out / "e.json"), str(out / "e.parquet"))))
    summary = json.loads((out / "e.json").read_text())
    assert summary["documents"] == 1 and summary["unparseable"] == summary["judge_calls"] > 0
    assert summary["located"] == 0


def test_report_writes_table_figures_and_agreement(files):
    out = files / "out"
    rows = pd.DataFrame([
        {"kind": "sparse", "qid": "q1", "doc_id": "d1", "source": "judged", "position": 15, "position_bin": 0,
         "doc_tokens": 28, "length_bin": 1},
        {"kind": "sparse", "qid": "q1", "doc_id": "d2", "source": "retrieved", "position": 0, "position_bin": 0,
         "doc_tokens": 20, "length_bin": 1},
        {"kind": "sparse", "qid": "q2", "doc_id": "d3", "source": "judged", "position": 40, "position_bin": 2,
         "doc_tokens": 50, "length_bin": 3}])
    out.mkdir()
    rows.to_csv(out / "dev.tsv", sep="\t", index=False)
    (out / "dev.json").write_text(json.dumps({"kind": "sparse", "queries": 4}))
    tables, figures, agreement = report_paths(str(out / "report"))
    steps.report(ReportJob({"dev": str(out / "dev.tsv")}, {"dev": str(out / "dev.json")}, SETTINGS, {"dev": "Dev"},
                           {"g": {"label": "G", "sets": ["dev"]}}, ["g"], tables, figures,
                           {"dev": str(files / "truth.tsv")}, agreement))
    table = pd.read_csv(tables["csv"])
    assert table.loc[0, ["documents", "bin0", "bin2_plus", "matched_queries"]].tolist() == [3, 2, 1, 2]
    assert table.loc[0, "coverage"] == 0.5
    assert "Dev" in open(tables["tex"]).read() and "Dev" in open(tables["md"]).read()
    found = pd.read_csv(agreement).iloc[0]
    assert found["located"] == 2 and found["bin_agreement"] == 1.0
    assert found["mean_abs_token_error"] == 2.5 and found["other_documents_located"] == 1
    for paths in figures.values():
        assert all(open(p, "rb").read(4) in (b"\x89PNG", b"%PDF") for p in paths)


def test_bad_files_are_input_errors_naming_them(tmp_path):
    (tmp_path / "x.tsv").write_text("qid\tstart\nq1\t3\n")
    with pytest.raises(InputError, match="x.tsv"):
        steps.read_rows(str(tmp_path / "x.tsv"))
    with pytest.raises(InputError, match="x.tsv"):
        read_truth(tmp_path / "x.tsv")
