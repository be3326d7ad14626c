"""The data steps write the standard formats, and FarRelevant keeps its placement rule end to end."""

from posbias.backbones import token_counter
from posbias.io import read_documents, read_qrels, read_queries
from posbias.data.steps import generate_synthetic
from posbias.farrelevant.jobs import FarRelevantJob
from posbias.farrelevant.steps import build_farrelevant

SETTINGS = dict(seed=3, n_entities=60, n_train_queries=20, n_dev_queries=6, n_test_queries=4,
                n_farrelevant_queries=30, first_window=16, min_doc_tokens=20, max_doc_tokens=48,
                early_fraction=0.85, literal_fraction=0.5, hard_negatives=2, pool_passages=80)


def test_generate_then_build_farrelevant(tmp_path, capsys):
    generate_synthetic(SETTINGS, "whitespace", str(tmp_path / "syn"), str(tmp_path / "pas"))
    docs = read_documents(tmp_path / "syn" / "docs.jsonl")
    for name in ("train", "dev", "test"):
        qrels = read_qrels(tmp_path / "syn" / "qrels" / f"{name}.txt")
        assert set(qrels) == set(read_queries(tmp_path / "syn" / "queries" / f"{name}.tsv"))
        assert all(doc in docs for judged in qrels.values() for doc in judged)
    far = tmp_path / "far"
    build_farrelevant(FarRelevantJob(
        str(tmp_path / "pas" / "docs.jsonl"), str(tmp_path / "pas" / "queries" / "farrelevant.tsv"),
        str(tmp_path / "pas" / "qrels" / "farrelevant.txt"),
        {"seed": 1, "n_queries": 10, "first_window": 16, "max_doc_tokens": 48}, "whitespace", str(far), "farrelevant"))
    far_docs = read_documents(far / "docs.jsonl")
    qrels = read_qrels(far / "qrels" / "farrelevant.txt")
    assert len(far_docs) == 30 and len(qrels) == 10  # a corpus for every query, a test set of ten
    progress = capsys.readouterr().err  # a progress bar that knows its total: one step per judged query
    assert "FarRelevant documents: 100%" in progress and " 30/30 " in progress
    passages = read_documents(tmp_path / "pas" / "docs.jsonl")
    passage_qrels = read_qrels(tmp_path / "pas" / "qrels" / "farrelevant.txt")
    count = token_counter("whitespace")
    for line in (far / "positions" / "farrelevant.tsv").read_text().splitlines()[1:]:
        qid, start = line.split("\t")
        (doc_id,) = qrels[qid]
        (pid,) = passage_qrels[qid]
        text, relevant = far_docs[doc_id], passages[pid]
        assert int(start) > 16 and count(text) <= 48
        assert " ".join(text.split()[int(start):]).startswith(relevant)
        assert text.count(relevant) == 1


def test_farrelevant_hard_negatives_join_its_corpus_unjudged(tmp_path):
    generate_synthetic({**SETTINGS, "farrelevant_hard_negatives": 2}, "whitespace", str(tmp_path / "syn"),
                       str(tmp_path / "pas"))
    negatives = read_documents(tmp_path / "pas" / "negatives.jsonl")
    assert len(negatives) == 2 * 30
    far = tmp_path / "far"
    build_farrelevant(FarRelevantJob(
        str(tmp_path / "pas" / "docs.jsonl"), str(tmp_path / "pas" / "queries" / "farrelevant.tsv"),
        str(tmp_path / "pas" / "qrels" / "farrelevant.txt"),
        {"seed": 1, "n_queries": 10, "first_window": 16, "max_doc_tokens": 48}, "whitespace", str(far), "farrelevant",
        negatives=str(tmp_path / "pas" / "negatives.jsonl")))
    far_docs = read_documents(far / "docs.jsonl")
    judged = {doc for per_query in read_qrels(far / "qrels" / "farrelevant.txt").values() for doc in per_query}
    assert len(far_docs) == 30 + 60
    assert {doc: text for doc, text in far_docs.items() if doc in negatives} == negatives
    assert not judged & set(negatives)


def test_the_debiased_copy_reorders_every_document_and_keeps_ids_titles_and_words(tmp_path):
    from posbias.io import document_records, write_documents
    from posbias.data.steps import debias_collection

    docs = [{"id": f"d{i}", "title": f"Title {i}", "text": " ".join(f"w{i}_{j}" for j in range(30))}
            for i in range(5)]
    write_documents(tmp_path / "docs.jsonl", docs)
    debias_collection(str(tmp_path / "docs.jsonl"), str(tmp_path / "out.jsonl"), n_splits=1, seed=0)
    out = list(document_records(tmp_path / "out.jsonl"))
    assert [d["id"] for d in out] == [d["id"] for d in docs] and [d["title"] for d in out] == [d["title"] for d in docs]
    for before, after in zip(docs, out):
        assert after["text"] != before["text"] and sorted(after["text"].split()) == sorted(before["text"].split())
        first = before["text"].split()[0]
        rotated = after["text"].split()
        # one cut, the parts swapped: the text read from the old first word on wraps around to the end
        k = rotated.index(first)
        assert rotated[k:] + rotated[:k] == before["text"].split()
