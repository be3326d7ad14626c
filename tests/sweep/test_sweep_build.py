"""The sweep builder keeps everything but the relevant passage's place: same words and length per query, true start
tokens, the same candidates at every position except the variant, and the same files for the same seed."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest
from sweep_data import FILLER, RELEVANT, outputs, write_source

from posbias.errors import InputError
from posbias.io import read_documents, read_qrels, read_queries, read_run
from posbias.sweep.steps import build_sweep

SETTINGS = {"n_queries": 2, "n_positions": 4, "doc_tokens": 60, "seed": 3}


def build(tmp_path, settings=SETTINGS, tokenizer="whitespace", name="out", depth=10, **source_options):
    source = write_source(tmp_path, **source_options)
    out = outputs(tmp_path / name)
    build_sweep({k: source[k] for k in ("queries", "qrels", "docs", "positions", "candidates")}, source["passages"],
                source["passage_qrels"], settings, tokenizer, "sweep", depth, out)
    return out


def test_variants_differ_only_in_where_the_passage_is(tmp_path):
    out = build(tmp_path)
    docs, positions = read_documents(out["docs"]), pd.read_csv(out["positions"], sep="\t")
    assert len(positions) == 2 * SETTINGS["n_positions"]
    for base, rows in positions.groupby("base"):
        texts = [docs[f"F{base}@p{p}"] for p in rows["position"]]
        assert len({frozenset(Counter(t.split()).items()) for t in texts}) == 1  # the same multiset of words
        assert len(set(rows["doc_tokens"])) == 1 and rows["doc_tokens"].iloc[0] == len(texts[0].split())
        assert rows["doc_tokens"].iloc[0] <= SETTINGS["doc_tokens"]
        passage = RELEVANT[base].split()
        for text, start in zip(texts, rows["start"]):  # the recorded start is where the passage's words are
            assert text.split()[start:start + len(passage)] == passage
        assert rows["start"].iloc[0] == 0 and rows["start"].is_monotonic_increasing
        assert rows["start"].iloc[-1] == rows["doc_tokens"].iloc[0] - len(passage)  # the last place: the end
        # the sentences around the passage keep their order
        rest = [t.replace(RELEVANT[base], " ").split() for t in texts]
        assert all(r == rest[0] for r in rest)


def test_start_tokens_are_true_for_a_wordpiece_tokenizer(tmp_path):
    from posbias.backbones import load_tokenizer

    name = "offline:all-MiniLM-L6-v2"
    out = build(tmp_path, tokenizer=name)
    tokenizer, docs = load_tokenizer(name), read_documents(out["docs"])
    for row in pd.read_csv(out["positions"], sep="\t").itertuples():
        ids = tokenizer(docs[f"F{row.base}@p{row.position}"], add_special_tokens=False)["input_ids"]
        passage = tokenizer(RELEVANT[row.base], add_special_tokens=False)["input_ids"]
        assert len(ids) == row.doc_tokens
        assert ids[row.start:row.start + len(passage)] == passage


def test_queries_qrels_and_candidates(tmp_path):
    out = build(tmp_path, retrieved={"q2": False})
    queries, qrels, run = read_queries(out["queries"]), read_qrels(out["qrels"]), read_run(out["candidates"])
    source = read_run(tmp_path / "candidates.run")
    assert queries["q1@p2"] == read_queries(tmp_path / "queries.tsv")["q1"]
    assert qrels["q1@p2"] == {"Fq1@p2": 1}
    for base in RELEVANT:
        lists = {qid: scores for qid, scores in run.items() if qid.startswith(f"{base}@")}
        assert len(lists) == SETTINGS["n_positions"]
        distractors = {frozenset(set(s) - {f"F{base}@p{qid.split('@p')[1]}"}) for qid, s in lists.items()}
        assert len(distractors) == 1  # the same distractors at every position
        for qid, scores in lists.items():
            variant = f"F{base}@p{qid.split('@p')[1]}"
            assert len(scores) == len(source[base]) and variant in scores
    # q1's relevant document was retrieved: its variant takes its place and score
    assert run["q1@p0"]["Fq1@p0"] == source["q1"]["Fq1"]
    assert set(run["q1@p0"]) - {"Fq1@p0"} == set(source["q1"]) - {"Fq1"}
    # q2's was not: the variant replaces the last candidate
    last = min(source["q2"], key=source["q2"].get)
    assert set(run["q2@p1"]) == set(source["q2"]) - {last} | {"Fq2@p1"}
    # the collection holds the variants and every distractor, with the source's texts
    docs, source_docs = read_documents(out["docs"]), read_documents(tmp_path / "docs.jsonl")
    assert {d for s in run.values() for d in s} == set(docs)
    assert all(docs[d] == source_docs[d] for d in docs if "@" not in d)


def test_a_shallower_depth_keeps_the_variant(tmp_path):
    out = build(tmp_path, depth=2)  # q1's relevant document is 2nd of 5, q2's 2nd too
    run = read_run(out["candidates"])
    assert all(len(scores) == 2 and qid.replace("q", "Fq", 1) in scores for qid, scores in run.items())
    out = build(tmp_path, depth=1, name="one")  # cut below it: the variant replaces the last one kept
    assert all(set(scores) == {qid.replace("q", "Fq", 1)} for qid, scores in read_run(out["candidates"]).items())


def test_seeded(tmp_path):
    first, second = build(tmp_path, name="a"), build(tmp_path, name="b")
    for key in first:
        assert open(first[key]).read() == open(second[key]).read()
    other = build(tmp_path, settings={**SETTINGS, "seed": 4}, name="c")
    assert open(other["docs"]).read() != open(first["docs"]).read()  # other top-up passages
    fewer = build(tmp_path, settings={**SETTINGS, "n_queries": 1}, name="d")  # a query's document is its own
    q1 = {k: v for k, v in read_documents(first["docs"]).items() if k.startswith("Fq1@")}
    assert q1 == {k: v for k, v in read_documents(fewer["docs"]).items() if k.startswith("Fq1@")}


def test_no_top_up_beyond_the_document_length(tmp_path):
    out = build(tmp_path, settings={**SETTINGS, "doc_tokens": 10})  # shorter than the documents: kept whole
    words = {w for text in read_documents(out["docs"]).values() for w in text.split()}
    used = {w for text in FILLER[:9] for w in text.split()} | {w for t in RELEVANT.values() for w in t.split()}
    assert words - {"distractor", "about", "the", "capital", "of", "somewhere", "else."} - set("012345") <= used


@pytest.mark.parametrize("settings,problem", [
    ({**SETTINGS, "n_positions": 9, "doc_tokens": 10}, r"query q1: 5 units have 6 boundaries, fewer than 9 positions"),
    ({**SETTINGS, "n_queries": 3}, r"2 judged queries, fewer than sweep.n_queries = 3"),
])
def test_bad_settings_name_the_problem(tmp_path, settings, problem):
    with pytest.raises(InputError, match=problem):
        build(tmp_path, settings=settings)


def test_a_document_without_its_passage_is_an_error(tmp_path):
    source = write_source(tmp_path)
    docs = read_documents(source["docs"])
    docs["Fq2"] = docs["Fq2"].replace("lune", "lone")
    from posbias.io import write_documents

    write_documents(source["docs"], ({"id": k, "text": v} for k, v in docs.items()))
    with pytest.raises(InputError, match=r"query q2, document Fq2: its relevant passage .* is not in the document"):
        build_sweep({k: source[k] for k in ("queries", "qrels", "docs", "positions", "candidates")},
                    source["passages"], source["passage_qrels"], SETTINGS, "whitespace", "sweep", 10, outputs(tmp_path))
