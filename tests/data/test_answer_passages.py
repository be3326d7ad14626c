"""The embedded generator's answering passages: each sits verbatim at its recorded token offset in a judged
document, and the offsets agree with the generator's own answer positions."""

from __future__ import annotations

from pathlib import Path

import yaml

from posbias.backbones import token_counter
from posbias.data.synthetic import GeneratorSettings, generate
from posbias.io import read_documents, read_qrels
from posbias.data.answer_passages import read_truth, write_answer_passages

ROOT = Path(__file__).resolve().parents[2]


def tiny_collection():
    section = yaml.safe_load((ROOT / "config" / "test" / "tiny.yaml").read_text())["generator"]["settings"]
    return generate(GeneratorSettings.from_config(section), token_counter("whitespace"))


def test_answering_passages_sit_at_their_offsets_in_judged_documents(tmp_path):
    collection = tiny_collection()
    documents = {d.doc_id: d.text for d in collection.documents}
    for queryset, per_query in collection.answer_passages.items():
        assert set(per_query) == set(collection.queries[queryset])
        for qid, spans in per_query.items():
            assert spans, f"{qid} has no answering passage"
            for span in spans:
                assert collection.qrels[queryset][qid][span["doc_id"]] >= 2 or queryset != "test"
                words = documents[span["doc_id"]].split()
                assert " ".join(words[span["start"]:span["start"] + len(span["text"].split())]) == span["text"]
            recorded = {span["doc_id"]: span["start"] for span in spans}
            answer_doc = next(d for d, g in collection.qrels[queryset][qid].items() if g in (1, 2) and d in recorded)
            assert recorded[answer_doc] == collection.answer_starts[queryset][qid]
    # test queries: the grade-3 document states the answer too
    assert all(len(spans) >= 2 for spans in collection.answer_passages["test"].values())

    write_answer_passages(tmp_path, collection.answer_passages)
    truth = read_truth(tmp_path / "positions" / "dev.tsv")
    passages = read_documents(tmp_path / "docs.jsonl")
    qrels = read_qrels(tmp_path / "qrels" / "dev.txt")
    assert len(truth) == len(collection.queries["dev"]) == len(qrels)
    assert all(passages[row.passage_id] in documents[row.doc_id] for row in truth.itertuples())
