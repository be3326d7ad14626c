"""FarRelevant built from MS MARCO passages read through ir_datasets (fixtures in its cache layout), and imported
from files in the published collection's layout: the appendix B.2 properties, sampling and bad input."""

from __future__ import annotations

import json
import os
import random
import tracemalloc
from pathlib import Path

import ir_datasets.util.download
import pytest
from fixtures_msmarco import _fresh, _lines, write_passage_collection, write_tar, write_text

from posbias.backbones import load_tokenizer
from posbias.data import farrelevant_sources
from posbias.data.farrelevant_sources import Reservoir, build_from_passages, import_local
from posbias.errors import InputError
from posbias.io import read_qrels, read_queries

HOME = Path(os.environ["IR_DATASETS_HOME"])  # set by tests/conftest.py before ir_datasets was imported
OFFLINE = "offline:all-MiniLM-L6-v2"
WORDS = ("river stone garden lamp violin harbor copper meadow lantern orbit canyon maple ember glacier "
         "falcon velvet quartz tundra saddle beacon").split()


@pytest.fixture(autouse=True)
def no_downloads(monkeypatch):
    """A missing or misnamed fixture file must fail the test, not start a download."""
    def refuse(self):
        raise AssertionError(f"ir_datasets tried to download {self.url}")
    monkeypatch.setattr(ir_datasets.util.download.RequestsDownload, "__iter__", refuse)


def passage_text(pid: int, rng: random.Random) -> str:
    # a unique first word per passage, so a document's passages can be told apart
    return f"marker{pid} " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 20)))


def write_collection(n_passages=400, dev=None, train=None, dev_queries=None, train_queries=None, seed=0) -> dict:
    """msmarco-passage with `n_passages` passages; dev/small and train queries with their TSV qrels.
    `dev`/`train`: {qid: [relevant pids]}; queries default to a text per judged qid."""
    rng = random.Random(seed)
    texts = {str(i): passage_text(i, rng) for i in range(n_passages)}
    dev = dev if dev is not None else {str(100 + i): [str(i)] for i in range(12)}
    train = train if train is not None else {str(500 + i): [str(20 + 2 * i), str(21 + 2 * i)] if i % 3 == 0
                                             else [str(20 + 2 * i)] for i in range(30)}
    dev_queries = dev_queries if dev_queries is not None else {q: f"question {q} {WORDS[int(q) % 20]}" for q in dev}
    train_queries = (train_queries if train_queries is not None
                     else {q: f"train question {q}" for q in [*train, "999"]})  # 999: never judged

    def qrels(judged):
        return _lines((q, "0", pid, "1") for q, pids in judged.items() for pid in pids)

    base = _fresh(HOME, "msmarco-passage")
    write_passage_collection(base / "collectionandqueries.tar.gz", _lines(texts.items()),
                             _lines(dev_queries.items()), qrels(dev))
    write_tar(base / "queries.tar.gz", {"queries.train.tsv": _lines(train_queries.items()).encode("utf-8")}, "gz")
    write_text(base / "train" / "qrels", qrels(train))
    return {"texts": texts, "dev": dev, "train": train, "base": base}


def settings(**changes):
    return {"seed": 7, "n_queries": 5, "n_train_queries": 10, "first_window": 40, "max_doc_tokens": 120, **changes}


def source(**changes):
    return {"kind": "ir_datasets", "pool_size": 150, **changes}


def read_docs(out: Path) -> dict[str, str]:
    return {d["id"]: d["text"] for d in map(json.loads, (out / "docs.jsonl").read_text().splitlines())}


def read_positions(path: Path) -> list[tuple[str, int, str]]:
    header, *rows = path.read_text().splitlines()
    assert header == "qid\tstart\tdoc_id"
    return [(q, int(s), d) for q, s, d in (row.split("\t") for row in rows)]


def build(tmp_path, name="out", tokenizer="whitespace", src=None, cfg=None):
    out = tmp_path / name
    counts = build_from_passages(src or source(), cfg or settings(), tokenizer, out, "farrelevant", "farrelevant_train")
    return out, counts


def test_documents_have_one_relevant_passage_after_the_first_window_within_the_cap(tmp_path):
    data = write_collection()
    out, counts = build(tmp_path, tokenizer=OFFLINE)
    tok = load_tokenizer(OFFLINE)
    n_tokens = lambda text: len(tok(text, add_special_tokens=False)["input_ids"])  # noqa: E731
    docs = read_docs(out)
    judged = {pid for sets in (data["dev"], data["train"]) for pids in sets.values() for pid in pids}
    # documents for every judged query of both sets (the corpus), one per query by default
    assert len(docs) == len(data["dev"]) + len(data["train"]) == counts["documents"]
    assert set(docs) == {f"{q}_{pids[0]}" for sets in (data["dev"], data["train"]) for q, pids in sets.items()}
    for doc_id, text in docs.items():
        qid, pid = doc_id.split("_")
        markers = [w for w in text.split() if w.startswith("marker")]
        assert markers.count(f"marker{pid}") == 1  # exactly one relevant passage ...
        assert not (set(markers) - {f"marker{pid}"}) & {f"marker{p}" for p in judged}  # ... and no judged filler
        assert n_tokens(text) <= 120
        relevant = data["texts"][pid]
        assert relevant in text
    for qs in ("farrelevant", "farrelevant_train"):
        for qid, start, doc_id in read_positions(out / "positions" / f"{qs}.tsv"):
            text, relevant = docs[doc_id], data["texts"][doc_id.split("_")[1]]
            before = text[:text.index(relevant)]
            assert start == n_tokens(before) > 40  # the offset is in tokens of the configured tokenizer
    assert counts["pool"] == 150


def test_query_sets_are_seeded_random_samples_and_builds_are_deterministic(tmp_path):
    data = write_collection()
    out, _ = build(tmp_path, "a")
    again, _ = build(tmp_path, "b")
    for rel in ("docs.jsonl", "queries/farrelevant.tsv", "qrels/farrelevant_train.txt", "positions/farrelevant.tsv"):
        assert (out / rel).read_bytes() == (again / rel).read_bytes(), rel
    test, train = read_queries(out / "queries" / "farrelevant.tsv"), read_queries(out / "queries" /
                                                                                  "farrelevant_train.tsv")
    assert len(test) == 5 and set(test) <= set(data["dev"]) and len(train) == 10 and set(train) <= set(data["train"])
    assert set(test) != {q for q in sorted(data["dev"])[:5]} or set(train) != set(sorted(data["train"])[:10])
    assert read_qrels(out / "qrels" / "farrelevant.txt") == {q: {f"{q}_{data['dev'][q][0]}": 1} for q in test}
    # another build seed moves the filler, not the samples (they have their own seed)
    other, _ = build(tmp_path, "c", cfg=settings(seed=8), src=source(sample_seed=7))
    assert read_docs(other) != read_docs(out)
    assert read_queries(other / "queries" / "farrelevant.tsv") == test


def test_per_qrel_builds_one_document_per_relevant_passage(tmp_path):
    data = write_collection()
    out, counts = build(tmp_path, src=source(per="qrel"))
    docs = read_docs(out)
    pairs = {f"{q}_{p}" for sets in (data["dev"], data["train"]) for q, pids in sets.items() for p in pids}
    assert set(docs) == pairs and counts["documents"] == len(pairs) > len(data["dev"]) + len(data["train"])
    qrels = read_qrels(out / "qrels" / "farrelevant_train.txt")
    for qid, judged in qrels.items():
        assert judged == {f"{qid}_{p}": 1 for p in data["train"][qid]}
    rows = read_positions(out / "positions" / "farrelevant_train.tsv")
    assert {d for _, _, d in rows} == {d for judged in qrels.values() for d in judged}


def test_without_a_training_query_set_the_corpus_still_holds_the_training_queries(tmp_path):
    data = write_collection()
    out = tmp_path / "out"
    build_from_passages(source(), settings(), "whitespace", out, "farrelevant")
    assert len(read_docs(out)) == len(data["dev"]) + len(data["train"])
    assert sorted(p.name for p in (out / "queries").iterdir()) == ["farrelevant.tsv"]


def test_a_query_in_both_sets_is_an_error(tmp_path):
    write_collection(train={"100": ["50"], "501": ["51"]})
    with pytest.raises(InputError, match=r"msmarco-passage/train/queries\.tsv: 1 queries are also in "
                                         r"msmarco-passage/dev/small, e\.g\. \['100'\]$"):
        build(tmp_path)


def test_the_literal_target_draw_keeps_the_properties(tmp_path):
    write_collection()
    out, _ = build(tmp_path, src=source(target_draw="before_prefix"))
    docs = read_docs(out)
    assert all(len(text.split()) <= 120 for text in docs.values())
    assert all(start > 40 for _, start, _ in read_positions(out / "positions" / "farrelevant.tsv"))


def test_the_pool_is_a_bounded_uniform_reservoir():
    reservoir = Reservoir(50, random.Random(1))
    for i in range(10_000):
        reservoir.offer(i)
        assert len(reservoir.items) <= 50
    assert len(set(reservoir.items)) == 50 and max(reservoir.items) > 5_000  # not just the first items
    again = Reservoir(50, random.Random(1))
    for i in range(10_000):
        again.offer(i)
    assert again.items == reservoir.items


def test_memory_grows_with_the_pool_not_the_collection(tmp_path):
    def peak(n_passages):
        write_collection(n_passages=n_passages)
        tracemalloc.start()
        try:
            build(tmp_path, f"m{n_passages}", src=source(pool_size=100))
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    peak(500)  # the first build pays for imports and caches
    small, large = peak(2_000), peak(20_000)  # without the pool's bound: about 0.6 and 3 MB
    assert large < 1.5 * small, (small, large)


def test_a_qrel_naming_an_absent_passage_names_the_qrels_file(tmp_path):
    data = write_collection(train={"500": ["20"], "501": ["123456"]})
    with pytest.raises(InputError) as caught:
        build(tmp_path)
    message = str(caught.value)
    assert "\n" not in message and str(data["base"] / "train" / "qrels") in message and "123456" in message


def test_a_judged_query_without_text_names_the_queries_file(tmp_path):
    write_collection(dev_queries={**{str(q): f"question {q}" for q in range(100, 112)}, "101": "   "})
    with pytest.raises(InputError) as caught:
        build(tmp_path)
    message = str(caught.value)
    # ir_datasets reads the queries from the file it extracted from collectionandqueries.tar.gz
    assert message.startswith(f"{HOME / 'msmarco-passage' / 'dev' / 'small' / 'queries.tsv'}: 1 queries judged in "
                              f"msmarco-passage/dev/small have no text, e.g. ['101']")
    assert "\n" not in message


def test_too_few_queries_for_the_sample_is_an_error(tmp_path):
    write_collection()
    with pytest.raises(InputError, match="msmarco-passage/dev/small: 12 test queries .* too few for a sample of 50"):
        build(tmp_path, cfg=settings(n_queries=50))


# --- the published collection's layout -------------------------------------------------------------


def write_published(root: Path, unit="tokens") -> dict:
    """input_data/{bitext,dev_official}/{AnswerFields.jsonl.gz, QuestionFields.jsonl, qrels.txt} (FlexNeuART's
    layout) and a position TSV."""
    import gzip

    rng = random.Random(3)
    docs, positions, layout = {}, {}, {"bitext": range(20, 40), "dev_official": range(100, 110)}
    for part, qids in layout.items():
        lines, questions, qrels = [], [], []
        for qid in qids:
            prefix = " ".join(rng.choice(WORDS) for _ in range(rng.randint(45, 60)))
            doc_id, relevant = f"{qid}_{qid + 7000}", f"answer {qid} here"
            text = f"{prefix} {relevant} {rng.choice(WORDS)}"
            docs[doc_id] = text
            positions[doc_id] = len(prefix) + 1 if unit == "chars" else len(prefix.split())
            lines.append(json.dumps({"DOCNO": doc_id, "text": "lemmatized words", "text_raw": text}))
            questions.append(json.dumps({"DOCNO": str(qid), "text": "lemma", "text_raw": f"question {qid}"}))
            qrels.append(f"{qid} 0 {doc_id} 1")
        directory = root / "input_data" / part
        directory.mkdir(parents=True)
        (directory / "AnswerFields.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
        (directory / "QuestionFields.jsonl").write_text("\n".join(questions) + "\n")
        if part == "dev_official":  # as the published sample's linked qrels: judged queries outside the file
            qrels += ["900 0 900_1 1", "901 0 901_1 1"]
        (directory / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (root / "positions.tsv").write_text("doc_id\tstart\n" + "".join(f"{d}\t{s}\n" for d, s in positions.items()))
    return {"docs": docs, "positions": positions}


def published_source(root: Path, **changes) -> dict:
    data = root / "input_data"
    return {"kind": "local", "fields": {"id": "DOCNO", "text": "text_raw"},
            "documents": [str(data / "bitext" / "AnswerFields.jsonl.gz"),
                          str(data / "dev_official" / "AnswerFields.jsonl.gz")],
            "test": {"queries": str(data / "dev_official" / "QuestionFields.jsonl"),
                     "qrels": str(data / "dev_official" / "qrels.txt")},
            "train": {"queries": str(data / "bitext" / "QuestionFields.jsonl"),
                      "qrels": str(data / "bitext" / "qrels.txt")},
            "positions": str(root / "positions.tsv"), **changes}


@pytest.mark.parametrize("unit", ["tokens", "chars"])
def test_the_published_collection_is_imported_into_the_standard_files(tmp_path, unit):
    published = write_published(tmp_path / "pub", unit)
    out = tmp_path / "out"
    counts = import_local(published_source(tmp_path / "pub", position_unit=unit),
                          settings(first_window=30), "whitespace", out, "farrelevant", "farrelevant_train")
    assert read_docs(out) == published["docs"] and counts["queries"] == {"farrelevant": 5, "farrelevant_train": 10}
    test = read_queries(out / "queries" / "farrelevant.tsv")
    assert set(test) <= {str(q) for q in range(100, 110)} and test[next(iter(test))].startswith("question")
    for qid, start, doc_id in read_positions(out / "positions" / "farrelevant.tsv"):
        words = published["docs"][doc_id].split()
        assert words[start:start + 2] == ["answer", qid] and doc_id.startswith(qid)


def test_an_imported_relevant_document_without_a_position_names_the_position_file(tmp_path):
    write_published(tmp_path / "pub")
    (tmp_path / "pub" / "positions.tsv").write_text("doc_id\tstart\n")
    with pytest.raises(InputError, match=r"positions\.tsv: no position for 5 relevant documents"):
        import_local(published_source(tmp_path / "pub"), settings(), "whitespace", tmp_path / "out", "farrelevant")


def test_an_imported_relevant_document_missing_from_the_documents_names_the_qrels_file(tmp_path):
    write_published(tmp_path / "pub")
    qrels = tmp_path / "pub" / "input_data" / "dev_official" / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 nosuchdoc{q} 1\n" for q in range(100, 110)))
    positions = tmp_path / "pub" / "positions.tsv"
    positions.write_text(positions.read_text() + "".join(f"nosuchdoc{q}\t3\n" for q in range(100, 110)))
    with pytest.raises(InputError) as caught:
        import_local(published_source(tmp_path / "pub"), settings(), "whitespace", tmp_path / "out", "farrelevant")
    assert str(caught.value).startswith(f"{qrels}: 5 relevant documents are not in") and "\n" not in str(caught.value)


def test_an_imported_query_with_empty_text_names_the_queries_file(tmp_path):
    write_published(tmp_path / "pub")
    queries = tmp_path / "pub" / "input_data" / "dev_official" / "QuestionFields.jsonl"
    queries.write_text(queries.read_text().replace('"text_raw": "question 104"', '"text_raw": " "'))
    with pytest.raises(InputError, match=rf"^{queries}: 1 queries judged in .*qrels.txt have no text, e.g. \['104'\]$"):
        import_local(published_source(tmp_path / "pub"), settings(), "whitespace", tmp_path / "out", "farrelevant")


def test_a_malformed_position_line_names_the_file_and_line(tmp_path):
    write_published(tmp_path / "pub")
    positions = tmp_path / "pub" / "positions.tsv"
    positions.write_text(positions.read_text() + "someid\tearly\n")
    with pytest.raises(InputError, match=r"positions\.tsv:32: expected 'doc_id<TAB>start'"):
        farrelevant_sources.read_positions(str(positions))


# --- the config ----------------------------------------------------------------------------------


def paper_config(**source) -> dict:
    from posbias.config import read_layered

    data = read_layered(Path(__file__).parents[3] / "config" / "paper" / "farrelevant.yaml")
    if source:
        data["farrelevant"]["source"] = source
    return data


def test_the_paper_config_needs_no_generator_and_fills_the_ms_marco_defaults():
    from posbias.config import prepare

    data = paper_config(kind="ir_datasets", pool_size=10)
    assert "generator" not in data
    assert prepare(data).farrelevant.source == {"kind": "ir_datasets", "pool_size": 10, "passages": "msmarco-passage",
                                        "test": "msmarco-passage/dev/small", "train": "msmarco-passage/train",
                                        "per": "query", "target_draw": "after_prefix"}


@pytest.mark.parametrize(("source", "tables", "message"), [
    ({"kind": "synthetic"}, {}, r"^generator: required because a query set uses the \['farrelevant'\] collection"),
    ({"kind": "local", "documents": "d.jsonl", "positions": "p.tsv", "test": {"queries": "q.tsv", "qrels": "r.txt"}},
     {}, r"^farrelevant\.source\.train: required for a local source"),
    ({"kind": "ir_datasets", "pool_size": 10, "per": "qrel"}, {"outcomes": {"querysets": ["farrelevant"]}},
     r"^tables\.outcomes\.querysets: \['farrelevant'\] can have several relevant documents per query"),
    ({"kind": "ir_datasets", "pool_size": 10, "positions": "p.tsv"}, {},
     r"^farrelevant\.source\.positions: unknown key; known: kind, passages, per, pool_size"),
    ({"kind": "ir_datasets"}, {}, r"^farrelevant\.source: 'pool_size' is a required property"),
])
def test_source_cross_checks_name_the_key(source, tables, message):
    from posbias.config import ConfigError, prepare

    data = paper_config(**source)
    data["tables"].update(tables)
    with pytest.raises(ConfigError, match=message):
        prepare(data)
