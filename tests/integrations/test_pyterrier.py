"""posbias as PyTerrier transformers (`posbias.integrations.pyterrier`), without Terrier's jars: on the embedded
collection, `pt.Experiment` of BM25 >> FirstP against BM25 >> MaxP (the same FirstP ranker read window by window,
the audit's window-aggregation mitigation) gives the numbers posbias's own rerank path and evaluation give; the
wrapping keeps every row with its own score; a frame without its text and a missing PyTerrier are one line."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from posbias.errors import InputError
from posbias.scoring.protocol import Scorer

pt = pytest.importorskip("pyterrier")
integration = importlib.import_module("posbias.integrations.pyterrier")
PosbiasCandidates, PosbiasReranker = integration.PosbiasCandidates, integration.PosbiasReranker

REPO = Path(__file__).resolve().parents[2]
METRICS = ["RR@10", "nDCG@10", "AP", "P@5"]
DEPTH, WINDOW = 10, 16  # BM25's candidates per query; the FirstP ranker's one window of document tokens


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    """The embedded collection at the tiny config's size in posbias's files, its Lucene index and BM25's dev run."""
    from posbias.data.steps import generate_synthetic
    from posbias.retrieval.steps import index, retrieve

    root = tmp_path_factory.mktemp("embedded")
    generator = yaml.safe_load((REPO / "config" / "test" / "tiny.yaml").read_text(encoding="utf-8"))["generator"]
    generate_synthetic(generator["settings"], generator["tokenizer"], str(root / "collection"), str(root / "passages"))
    index(str(root / "collection" / "docs.jsonl"), str(root / "index"), threads=1)
    retrieve(str(root / "index"), str(root / "collection" / "queries" / "dev.tsv"), str(root / "bm25.run"), k=DEPTH,
             k1=0.9, b=0.4, threads=1)
    return root


@pytest.fixture(scope="module")
def firstp(tiny_backbone, tmp_path_factory) -> tuple[str, str]:
    """A FirstP checkpoint (random weights, a spread-out head) and its export as a Hugging Face cross-encoder."""
    from posbias.audit.export import export_checkpoint
    from posbias.backbones import load_tokenizer
    from posbias.rankers.checkpoint import save_checkpoint
    from posbias.rankers.registry import build_ranker

    root = tmp_path_factory.mktemp("firstp")
    torch.manual_seed(3)
    ranker = build_ranker("firstp", dict(backbone=tiny_backbone, pooling="cls", max_query_tokens=8,
                                         chunk_tokens=WINDOW, stride=WINDOW, max_doc_tokens=WINDOW)).eval()
    with torch.no_grad():
        ranker.head.score.weight.normal_()
    save_checkpoint(ranker, load_tokenizer(tiny_backbone), str(root / "ckpt"))
    return str(root / "ckpt"), str(export_checkpoint(str(root / "ckpt"), str(root / "hf")))


def posbias_runs(embedded, checkpoint: str, exported: str) -> dict[str, Path]:
    """The runs posbias itself writes: BM25's, the checkpoint's rerank of it (the rerank stage's path, documents
    read from a token store) and the exported model's windows of it (scored query by query)."""
    from posbias.data.token_store import build_token_store
    from posbias.io import read_documents, read_queries, read_run, write_run
    from posbias.rerank.steps import rerank_candidates
    from posbias.scoring.cross_encoder import CrossEncoder
    from posbias.scoring.reranking import Reranking

    collection, runs = embedded / "collection", {"BM25": embedded / "bm25.run"}
    build_token_store(collection / "docs.jsonl", embedded / "tokens", "offline:all-MiniLM-L6-v2", None,
                      progress=False)
    runs["BM25 >> FirstP"] = embedded / "firstp.run"
    rerank_candidates(checkpoint, Reranking([str(embedded / "tokens")], [str(collection / "queries" / "dev.tsv")],
                                            [str(runs["BM25"])], [str(runs["BM25 >> FirstP"])], "firstp",
                                            {"batch_size": 32, "device": "cpu"}), torch.get_num_threads(), False)
    maxp = CrossEncoder(exported, device="cpu", view_window=WINDOW, view_stride=WINDOW, aggregate="max")
    queries, candidates = read_queries(collection / "queries" / "dev.tsv"), read_run(runs["BM25"])
    texts = read_documents(collection / "docs.jsonl")
    runs["BM25 >> MaxP"] = embedded / "maxp.run"
    write_run(runs["BM25 >> MaxP"], {qid: dict(zip(docs, maxp.score([(queries[qid], texts[d]) for d in docs])))
                                     for qid, docs in candidates.items()}, tag="maxp")
    return runs


def posbias_numbers(embedded, run: Path, system: str) -> dict[str, float]:
    """posbias's evaluation of a run (the evaluate stage's per-query values), averaged over the queries."""
    from posbias.evaluation.steps import evaluate_run

    out = run.with_suffix(".parquet")
    evaluate_run(str(embedded / "collection" / "qrels" / "dev.txt"), str(run), METRICS, str(out), system, 1, "dev")
    return pd.read_parquet(out).groupby("metric")["value"].mean().to_dict()


def test_an_experiment_of_firstp_against_maxp_gives_posbias_s_own_numbers(embedded, firstp):
    from posbias.evaluation.metrics import parse_metrics
    from posbias.io import read_queries, read_ranked_run

    checkpoint, exported = firstp
    collection = embedded / "collection"
    topics = pd.DataFrame(read_queries(collection / "queries" / "dev.tsv").items(), columns=["qid", "query"])
    qrels = pt.io.read_qrels(str(collection / "qrels" / "dev.txt"))
    bm25 = PosbiasCandidates.bm25(str(embedded / "index"), k=DEPTH, docs=str(collection / "docs.jsonl"))
    rerankers = {"BM25 >> FirstP": PosbiasReranker.from_checkpoint(checkpoint, device="cpu", batch_size=8),
                 "BM25 >> MaxP": PosbiasReranker.window_aggregation(f"cross-encoder:{exported}", window=WINDOW,
                                                                    device="cpu", batch_size=7)}
    systems = {"BM25": bm25, **{name: bm25 >> reranker for name, reranker in rerankers.items()}}
    # ir_measures' measures (pyterrier reads a string as a trec_eval name: map, recip_rank, ...); BM25 runs once
    table = pt.Experiment(list(systems.values()), topics, qrels, eval_metrics=parse_metrics(METRICS),
                          names=list(systems), validate="error", verbose=False, plan="tree").set_index("name")

    runs = posbias_runs(embedded, checkpoint, exported)
    own = pd.DataFrame({system: posbias_numbers(embedded, runs[system], system) for system in systems}).T[METRICS]
    print(f"\npt.Experiment:\n{table[METRICS].to_string()}\nposbias's evaluation of its own runs:\n{own.to_string()}")
    for system in systems:
        assert table.loc[system, METRICS].tolist() == pytest.approx(own.loc[system].tolist(), abs=1e-12), system
    assert not pt.java.started()  # no Terrier: BM25 was pyserini's, through posbias

    # each candidate kept its own score, and its rank is the one posbias wrote (pyterrier counts ranks from 0)
    for system, reranker in rerankers.items():
        frame = (bm25 >> reranker).transform(topics)
        written = read_ranked_run(runs[system])
        assert len(frame) == sum(map(len, written.values())) == len(topics) * DEPTH
        for row in frame.itertuples():
            rank, score = written[row.qid][row.docno]
            assert (row.rank + 1, row.score) == (rank, pytest.approx(score, abs=1e-5)), (system, row)
    assert len(bm25.transform(topics).merge(PosbiasCandidates.from_run(runs["BM25"]).transform(topics),
                                            on=["qid", "docno", "score", "rank"])) == len(topics) * DEPTH


class Arithmetic(Scorer):
    """A scorer whose score of a pair is known in advance: the document's number, plus the query's / 1000; it
    records the size of each call."""

    def __init__(self):
        self.calls = []

    def score(self, pairs, metas=None):
        self.calls.append(len(pairs))
        return np.array([float(document.split()[-1]) + float(query.split()[-1]) / 1000 for query, document in pairs])


def test_every_row_keeps_its_own_score_in_any_order_and_any_batch():
    rng = np.random.default_rng(0)
    rows = [(f"q{q}", f"query {q}", f"d{d}", f"document number {d}", rng.normal())
            for q in (2, 10, 1) for d in rng.permutation(7)]
    frame = pd.DataFrame(rows, columns=["qid", "query", "docno", "text", "score"]).sample(frac=1, random_state=1)
    frame["rank"], frame["kept"] = 99, frame["docno"] + "/" + frame["qid"]
    scorer = Arithmetic()
    out = PosbiasReranker(scorer, batch_size=4).transform(frame)

    assert scorer.calls == [4, 4, 4, 4, 4, 1]  # 21 pairs, 4 a call: batches across queries
    assert sorted(zip(out["qid"], out["docno"])) == sorted(zip(frame["qid"], frame["docno"]))
    assert (out["kept"] == out["docno"] + "/" + out["qid"]).all()  # the other columns stay with their row
    expected = out["docno"].str[1:].astype(float) + out["qid"].str[1:].astype(float) / 1000
    assert out["score"].tolist() == pytest.approx(expected.tolist())
    assert out["qid"].tolist() == sorted(out["qid"]) and out["rank"].tolist() == list(range(7)) * 3
    assert (out.groupby("qid")["score"].diff().dropna() < 0).all()  # best first, within each query
    assert list(out.columns) == ["qid", "query", "docno", "text", "kept", "score", "rank"]


def test_ties_are_ranked_as_trec_eval_ranks_them():
    class Flat(Scorer):
        def score(self, pairs, metas=None):
            return np.zeros(len(pairs))

    frame = pd.DataFrame({"qid": "q", "query": "x", "docno": ["a", "c", "b"], "text": "t"})
    assert PosbiasReranker(Flat()).transform(frame)["docno"].tolist() == ["c", "b", "a"]  # docno descending


def test_text_comes_from_docs_when_the_frame_has_none(tmp_path):
    from posbias.io import write_documents

    frame = pd.DataFrame({"qid": ["q1", "q1"], "query": ["query 1", "query 1"], "docno": ["a", "b"]})
    write_documents(tmp_path / "docs.jsonl", [{"id": "a", "text": "doc 3"}, {"id": "b", "text": "doc 5"},
                                              {"id": "c", "text": "doc 9"}])
    for docs in ({"a": "doc 3", "b": "doc 5"}, str(tmp_path / "docs.jsonl")):
        out = PosbiasReranker(Arithmetic(), docs=docs).transform(frame)
        assert out["docno"].tolist() == ["b", "a"] and out["score"].tolist() == pytest.approx([5.001, 3.001])
    with pytest.raises(InputError, match=r"1 documents are not in the document mapping, e\.g\. \['b'\]"):
        PosbiasReranker(Arithmetic(), docs={"a": "doc 3"}).transform(frame)


def test_a_frame_without_its_text_is_one_line_naming_the_column():
    frame = pd.DataFrame({"qid": ["q1"], "query": ["query 1"], "docno": ["a"], "score": [1.0]})
    with pytest.raises(InputError) as error:
        PosbiasReranker(Arithmetic()).transform(frame)
    message = str(error.value)
    assert "\n" not in message and message.startswith("PosbiasReranker(Arithmetic): the results frame lacks 'text' "
                                                      "(its columns: qid, query, docno, score); give the documents'")
    with pytest.raises(InputError, match=r"lacks 'query' \(its columns: qid, docno, text\)$"):
        PosbiasReranker(Arithmetic()).transform(frame.drop(columns=["query", "score"]).assign(text="doc 1"))
    # pyterrier's inspection finds the same before a pipeline runs
    with pytest.raises(pt.validate.InputValidationError, match="text"):
        pt.inspect.transformer_outputs(PosbiasReranker(Arithmetic()), ["qid", "query", "docno", "score"])
    assert pt.inspect.transformer_outputs(PosbiasReranker(Arithmetic(), docs={}), ["qid", "query", "docno"]) == [
        "qid", "query", "docno", "score", "rank"]


def test_a_spec_loads_what_the_audit_loads_and_a_mistake_is_one_line(firstp):
    checkpoint, exported = firstp
    pairs = pd.DataFrame({"qid": "q", "query": "capital of zorvia", "docno": ["a", "b"],
                          "text": ["the capital of zorvia is mendal", "green hills " * 20]})
    by_spec = PosbiasReranker.from_spec(f"checkpoint:{checkpoint}", device="cpu").transform(pairs)
    by_path = PosbiasReranker.from_checkpoint(checkpoint, device="cpu").transform(pairs)
    assert by_spec["score"].tolist() == pytest.approx(by_path["score"].tolist(), abs=1e-5)
    first = PosbiasReranker.from_spec(f"cross-encoder:{exported}", mitigation=f"window_aggregation?window={WINDOW}"
                                      "&aggregate=first", device="cpu")
    assert repr(first) == f"PosbiasReranker(cross-encoder-hf-window{WINDOW}-aggregatefirst)"  # the audit's name
    with pytest.raises(InputError, match="window_aggregation applies to cross-encoder, not to a checkpoint"):
        PosbiasReranker.window_aggregation(f"checkpoint:{checkpoint}", window=WINDOW)
    with pytest.raises(InputError, match="a reader does not score"):
        PosbiasReranker.from_spec("reader:mock:u_curve", cache_mode="off")
    with pytest.raises(InputError, match="wraps a posbias scorer"):
        PosbiasReranker(object())


def test_a_run_file_gives_each_topic_its_top_candidates_with_their_text(tmp_path):
    from posbias.io import write_run

    write_run(tmp_path / "first.run", {"q1": {"a": 1.0, "b": 3.0, "c": 3.0}, "q2": {"d": 1.0}}, tag="x")
    topics = pd.DataFrame({"qid": ["q1", "q3"], "query": ["query one", "query three"]})
    docs = {"a": "doc a", "b": "doc b", "c": "doc c"}
    out = PosbiasCandidates.from_run(tmp_path / "first.run", depth=2, docs=docs).transform(topics)
    assert out[["qid", "query", "docno", "score", "rank", "text"]].values.tolist() == [
        ["q1", "query one", "c", 3.0, 0, "doc c"], ["q1", "query one", "b", 3.0, 1, "doc b"]]  # q3: in no run
    with pytest.raises(InputError, match=r"the topics frame lacks 'qid' \(its columns: query\)"):
        PosbiasCandidates.from_run(tmp_path / "first.run").transform(topics[["query"]])
    with pytest.raises(InputError, match="no such Lucene index"):
        PosbiasCandidates.bm25(str(tmp_path / "nowhere"))


def test_without_pyterrier_the_module_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyterrier", None)  # `import pyterrier` now fails as if it were not installed
    monkeypatch.delitem(sys.modules, "posbias.integrations.pyterrier")
    with pytest.raises(InputError) as error:
        importlib.import_module("posbias.integrations.pyterrier")
    assert "\n" not in str(error.value) and "pip install 'posbias[pyterrier]'" in str(error.value)


def test_the_docs_page_uses_only_what_the_module_has():
    page = (REPO / "docs" / "integrations" / "pyterrier.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```$", page, flags=re.M | re.S)
    assert blocks and "pip install 'posbias[pyterrier]'" in page
    for block in blocks:
        compile(block, "docs/integrations/pyterrier.md", "exec")
        for owner, attribute in re.findall(r"\b(PosbiasReranker|PosbiasCandidates)\.(\w+)", block):
            assert hasattr(getattr(integration, owner), attribute), f"{owner}.{attribute}"
        for measures in re.findall(r"eval_metrics=(\[.*?\])", block):  # measures, not strings pyterrier misreads
            assert all(isinstance(m, ir_measures.Measure) for m in eval(measures, vars(pt.measures))), measures
