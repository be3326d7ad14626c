"""The hybrid first stage end to end on a tiny collection: dense candidates, exact BM25, fusion."""

import json
import logging
import os

import numpy as np
import pytest

from posbias.io import write_documents
from posbias.retrieval import bm25, faiss_index, vectors
from posbias.retrieval.fusion import min_max
from posbias.retrieval.hybrid import bm25_scores, check_same_encoder, dense_candidates, hybrid_search
from posbias.retrieval.index_build import build_dense_index
from posbias.retrieval.dense import DenseEncoder

ENCODER = {"model": "offline:all-MiniLM-L6-v2", "pooling": "mean", "max_passage_tokens": 64, "batch_size": 4}
DOCS = {"d1": "the capital of zorvia is mendal, a city on the river",
        "d2": "zorvia zorvia zorvia has green hills and a capital",
        "d3": "the bakery opens early on sundays and sells bread",
        "d4": "mount kel is the tallest mountain of brel",
        "d5": "mendal hosts the parliament of zorvia and its capital markets",
        "d6": "bread and cakes from the old bakery in mendal",
        "d7": "rivers of brel run from mount kel to the sea",
        "d8": "a quiet village far from any capital city"}
QUERIES = {"q1": "capital of zorvia", "q2": "tallest mountain brel", "q3": "fresh bread bakery"}
K1, B = 1.2, 0.75  # not pyserini's defaults (0.9, 0.4), so a similarity that ignored them would show


@pytest.fixture(scope="module")
def indexes(tmp_path_factory):
    root = tmp_path_factory.mktemp("hybrid")
    write_documents(root / "docs.jsonl", [{"id": doc_id, "text": text} for doc_id, text in DOCS.items()])
    bm25.build_index(str(root / "docs.jsonl"), str(root / "lucene"), threads=1)
    count = build_dense_index(str(root / "docs.jsonl"), str(root / "dense"), ENCODER, {"index": "flat"})
    assert count == len(DOCS)
    return root


def lucene_searcher(index_dir):
    """pyserini's own searcher (its module builds an OpenAI client when imported, which wants a key)."""
    os.environ.setdefault("OPENAI_API_KEY", "not-used-by-the-tests")
    from pyserini.search.lucene import LuceneSearcher

    return LuceneSearcher(str(index_dir))


def lucene_bm25(index_dir, query: str, k1: float, b: float) -> dict[str, float]:
    """pyserini's own BM25 ranking over the whole collection (documents without a query term are absent)."""
    searcher = lucene_searcher(index_dir)
    searcher.set_bm25(k1=k1, b=b)
    return {hit.docid: hit.score for hit in searcher.search(query, k=len(DOCS))}


def test_bm25_scores_of_pairs_equal_pyserini_search_scores(indexes):
    candidates = {qid: dict.fromkeys(DOCS, 0.0) for qid in QUERIES}
    scores = bm25_scores(str(indexes / "lucene"), QUERIES, candidates, K1, B)
    for qid, query in QUERIES.items():
        expected = lucene_bm25(indexes / "lucene", query, K1, B)
        # LuceneSearcher rounds scores to 4 decimals (Anserini's tie-breaking), hence the tolerance.
        assert scores[qid] == pytest.approx({doc_id: expected.get(doc_id, 0.0) for doc_id in DOCS}, abs=2e-4)
    assert scores["q3"]["d4"] == 0.0  # no query term in the document
    default = lucene_bm25(indexes / "lucene", QUERIES["q1"], 0.9, 0.4)
    assert max(abs(scores["q1"][doc_id] - default[doc_id]) for doc_id in default) > 0.01


def test_bm25_search_returns_what_pyserinis_searcher_returns(indexes):
    searcher = lucene_searcher(indexes / "lucene")
    searcher.set_bm25(k1=K1, b=B)
    expected = searcher.batch_search(list(QUERIES.values()), list(QUERIES), k=3, threads=1)
    run = bm25.search(str(indexes / "lucene"), QUERIES, k=3, k1=K1, b=B)
    assert run == {qid: {hit.docid: float(hit.score) for hit in expected[qid]} for qid in QUERIES}
    assert [list(scores) for scores in run.values()] == [[hit.docid for hit in expected[qid]] for qid in QUERIES]


def test_dense_candidates_are_the_top_k_cosines(indexes):
    encoder = DenseEncoder.from_config(ENCODER)
    index, doc_ids = faiss_index.load(indexes / "dense")
    candidates = dense_candidates(encoder, index, doc_ids, QUERIES, k=3)
    doc_vectors = encoder.encode_passages(list(DOCS.values()), progress=False)
    for qid, query in QUERIES.items():
        cosines = doc_vectors @ encoder.encode_queries([query])[0]
        top = np.argsort(-cosines)[:3]
        assert candidates[qid] == pytest.approx({list(DOCS)[i]: float(cosines[i]) for i in top}, abs=1e-5)
    assert max(candidates["q2"], key=candidates["q2"].get) == "d4"


def test_hybrid_fuses_exact_bm25_and_cosine_of_the_candidates(indexes):
    def search(weight, k=len(DOCS)):
        return hybrid_search(QUERIES, str(indexes / "dense"), str(indexes / "lucene"), ENCODER, k, K1, B, weight)

    bm25_only, cosine_only, half = search(1.0), search(0.0), search(0.5)
    encoder = DenseEncoder.from_config(ENCODER)
    doc_vectors = encoder.encode_passages(list(DOCS.values()), progress=False)
    for qid, query in QUERIES.items():
        expected_bm25 = lucene_bm25(indexes / "lucene", query, K1, B)
        assert bm25_only[qid] == pytest.approx(min_max({d: expected_bm25.get(d, 0.0) for d in DOCS}), abs=1e-3)
        cosines = doc_vectors @ encoder.encode_queries([query])[0]
        assert cosine_only[qid] == pytest.approx(min_max(dict(zip(DOCS, map(float, cosines)))), abs=1e-4)
        assert half[qid] == pytest.approx({d: (bm25_only[qid][d] + cosine_only[qid][d]) / 2 for d in DOCS})
    assert max(half["q1"], key=half["q1"].get) in {"d1", "d2", "d5"}
    assert all(len(scores) == 2 for scores in search(0.5, k=2).values())


def test_a_candidate_missing_from_the_lucene_index_is_named(indexes, tmp_path):
    write_documents(tmp_path / "more.jsonl", [{"id": doc_id, "text": text} for doc_id, text in DOCS.items()]
                    + [{"id": "ghost", "text": "capital of zorvia capital of zorvia"}])
    build_dense_index(str(tmp_path / "more.jsonl"), str(tmp_path / "dense"), ENCODER, {"index": "flat"})
    with pytest.raises(ValueError, match="'ghost' is a dense candidate but is not in the Lucene index"):
        hybrid_search({"q1": "capital of zorvia"}, str(tmp_path / "dense"), str(indexes / "lucene"), ENCODER,
                      k=len(DOCS) + 1, k1=K1, b=B, weight=0.5)


def test_querying_with_another_encoder_is_an_error(indexes):
    with pytest.raises(ValueError, match="different encoder.*query_prefix: index '' vs query 'query: '"):
        hybrid_search(QUERIES, str(indexes / "dense"), str(indexes / "lucene"), {**ENCODER, "query_prefix": "query: "},
                      k=3, k1=K1, b=B, weight=0.5)


def test_build_checks_ivf_size_and_settings_before_encoding(tmp_path, indexes):
    with pytest.raises(ValueError, match="nlist=100 clusters need at least as many vectors.*got 8"):
        build_dense_index(str(indexes / "docs.jsonl"), str(tmp_path / "dense"), ENCODER, {"index": "ivf", "nlist": 100})
    with pytest.raises(ValueError, match=r"unknown keys \['kind'\]"):
        build_dense_index(str(indexes / "docs.jsonl"), str(tmp_path / "dense"), ENCODER, {"kind": "flat"})
    assert not (tmp_path / "dense").exists()


def test_encoding_in_blocks_gives_the_same_index(indexes, tmp_path):
    build_dense_index(str(indexes / "docs.jsonl"), str(tmp_path / "blocks"), ENCODER, {"index": "flat"},
                      block_size=3)
    whole, whole_ids = faiss_index.load(indexes / "dense")
    blocks, block_ids = faiss_index.load(tmp_path / "blocks")
    assert block_ids == whole_ids == list(DOCS)
    np.testing.assert_allclose(blocks.reconstruct_n(0, len(DOCS)), whole.reconstruct_n(0, len(DOCS)), atol=1e-5)


def test_an_ivf_index_is_built_block_by_block_and_finds_what_flat_finds(indexes, tmp_path, monkeypatch):
    monkeypatch.setattr(faiss_index.IncrementalBuilder, "TRAIN_PER_LIST", 2)  # train on 4 vectors: two blocks
    build_dense_index(str(indexes / "docs.jsonl"), str(tmp_path / "ivf"), ENCODER,
                      {"index": "ivf", "nlist": 2, "nprobe": 2}, block_size=3)
    ivf, ivf_ids = faiss_index.load(tmp_path / "ivf")
    assert ivf_ids == list(DOCS) and ivf.ntotal == len(DOCS)
    encoder = DenseEncoder.from_config(ENCODER)
    flat, flat_ids = faiss_index.load(indexes / "dense")
    exact = dense_candidates(encoder, flat, flat_ids, QUERIES, k=4)
    for qid, found in dense_candidates(encoder, ivf, ivf_ids, QUERIES, k=4).items():
        assert found == pytest.approx(exact[qid], abs=1e-5)


@pytest.fixture(scope="module")
def cpu_index(tmp_path_factory):
    """A flat index of DOCS encoded on the CPU (no Lucene index: these tests stop before BM25)."""
    root = tmp_path_factory.mktemp("dense-only")
    write_documents(root / "docs.jsonl", [{"id": doc_id, "text": text} for doc_id, text in DOCS.items()])
    build_dense_index(str(root / "docs.jsonl"), str(root / "dense"), {**ENCODER, "device": "cpu"}, {"index": "flat"})
    return root / "dense"


def rewrite_metadata(index_dir, tmp_path, change) -> str:
    """A copy of `index_dir` whose metadata.json is `change(metadata)`."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(index_dir, copy)
    metadata = json.loads((copy / faiss_index.METADATA_FILE).read_text())
    (copy / faiss_index.METADATA_FILE).write_text(json.dumps(change(metadata)))
    return str(copy)


def test_the_index_records_the_encoder_device_and_precision(cpu_index):
    metadata = faiss_index.load_metadata(cpu_index)
    assert metadata["numerics"] == {"device": "cpu", "precision": "fp32"}
    assert metadata["encoder"]["head"] == "none" and metadata["encoder"]["pooling"] == "mean"


def test_queries_encoded_on_another_device_get_a_warning_only(cpu_index, tmp_path, caplog):
    encoder = DenseEncoder.from_config({**ENCODER, "device": "cpu"})
    with caplog.at_level(logging.WARNING, logger="posbias.retrieval.hybrid"):
        check_same_encoder(str(cpu_index), encoder)
    assert not caplog.records
    gpu_built = rewrite_metadata(cpu_index, tmp_path, lambda m: {**m, "numerics": {"device": "cuda",
                                                                                   "precision": "fp16"}})
    with caplog.at_level(logging.WARNING, logger="posbias.retrieval.hybrid"):
        check_same_encoder(gpu_built, encoder)
    assert "queries are encoded differently from its documents (device: index 'cuda' vs query 'cpu', " \
           "precision: index 'fp16' vs query 'fp32')" in caplog.text


def test_an_index_from_before_head_and_numerics_were_recorded_is_still_usable(cpu_index, tmp_path, caplog):
    def older(metadata):
        encoder = {key: value for key, value in metadata["encoder"].items() if key != "head"}
        return {"encoder": encoder}  # no numerics either

    encoder = DenseEncoder.from_config({**ENCODER, "device": "cpu"})
    with caplog.at_level(logging.WARNING, logger="posbias.retrieval.hybrid"):
        check_same_encoder(rewrite_metadata(cpu_index, tmp_path, older), encoder)
    assert not caplog.records


def test_the_encoding_progress_bar_counts_towards_the_number_of_documents(indexes, tmp_path, monkeypatch):
    bars = []

    class RecordingBar(vectors.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            bars.append(self)

    monkeypatch.setattr(vectors, "tqdm", RecordingBar)
    build_dense_index(str(indexes / "docs.jsonl"), str(tmp_path / "dense"), ENCODER, {"index": "flat"}, block_size=3)
    assert [(bar.total, bar.n) for bar in bars] == [(len(DOCS), len(DOCS))]
