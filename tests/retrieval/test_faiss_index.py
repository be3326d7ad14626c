"""FAISS indexes over unit vectors: exactness of flat, recall of IVF and HNSW, save/load, settings."""

import json
import os
import re

import numpy as np
import pytest

from posbias.errors import DiskFullError, InputError
from posbias.retrieval import faiss_index
from posbias.retrieval.faiss_index import FaissSettings

DIM = 32


def unit_vectors(n: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def docs():
    return unit_vectors(2000, seed=0)


@pytest.fixture(scope="module")
def queries():
    return unit_vectors(50, seed=1)


def recall_at(k: int, positions: np.ndarray, exact: np.ndarray) -> float:
    return np.mean([len(set(row) & set(truth)) / k for row, truth in zip(positions[:, :k], exact[:, :k])])


def test_flat_search_equals_brute_force_inner_products(docs, queries):
    index = faiss_index.build(docs, FaissSettings(index="flat", use_gpu=False), progress=False)
    scores, positions = faiss_index.search(index, queries, k=10)
    brute = queries @ docs.T
    expected = np.argsort(-brute, axis=1)[:, :10]
    np.testing.assert_array_equal(positions, expected)
    np.testing.assert_allclose(scores, np.take_along_axis(brute, expected, axis=1), rtol=1e-5, atol=1e-6)


APPROXIMATE = [FaissSettings(index="hnsw", m=16, ef_construction=80, ef_search=64, use_gpu=False),
               FaissSettings(index="ivf", nlist=16, nprobe=8, use_gpu=False)]


@pytest.mark.parametrize("settings", APPROXIMATE, ids=["hnsw", "ivf"])
def test_approximate_indexes_recall_most_exact_neighbours(docs, queries, settings):
    exact = np.argsort(-(queries @ docs.T), axis=1)
    _, positions = faiss_index.search(faiss_index.build(docs, settings, progress=False), queries, k=10)
    assert recall_at(10, positions, exact) >= 0.8


def test_ivf_nprobe_all_lists_is_exact(docs, queries):
    settings = FaissSettings(index="ivf", nlist=8, nprobe=8, use_gpu=False)
    _, positions = faiss_index.search(faiss_index.build(docs, settings, progress=False), queries, k=10)
    assert recall_at(10, positions, np.argsort(-(queries @ docs.T), axis=1)) == 1.0


def test_save_load_round_trip_keeps_results_ids_and_search_parameters(tmp_path, docs, queries):
    settings = FaissSettings(index="ivf", nlist=16, nprobe=3, use_gpu=False)
    index = faiss_index.build(docs, settings, progress=False)
    doc_ids = [f"doc{i}" for i in range(len(docs))]
    faiss_index.save(tmp_path / "dense", index, doc_ids, settings, metadata={"encoder": {"model": "m"}})
    loaded, loaded_ids = faiss_index.load(tmp_path / "dense")
    assert loaded_ids == doc_ids and loaded.nprobe == 3  # nprobe is not in FAISS's file: it comes from settings
    for got, want in zip(faiss_index.search(loaded, queries, 10), faiss_index.search(index, queries, 10)):
        np.testing.assert_array_equal(got, want)
    assert faiss_index.load_metadata(tmp_path / "dense") == {"encoder": {"model": "m"}}
    assert [p.name for p in tmp_path.iterdir()] == ["dense"]  # no staging directory left beside it


def test_save_replaces_an_old_index_and_refuses_mismatched_ids(tmp_path, docs):
    settings = FaissSettings(use_gpu=False)
    five, three = (faiss_index.build(docs[:n], settings, progress=False) for n in (5, 3))
    faiss_index.save(tmp_path / "dense", five, list("abcde"), settings)
    faiss_index.save(tmp_path / "dense", three, list("xyz"), settings)
    assert faiss_index.load(tmp_path / "dense")[1] == list("xyz")
    with pytest.raises(ValueError, match="2 doc ids for an index of 3"):
        faiss_index.save(tmp_path / "other", three, ["a", "b"], settings)


def test_an_index_the_disk_has_no_room_for_is_one_line_and_leaves_nothing(docs, small_disk):
    disk = small_disk("64k")  # the flat index of 2000 vectors takes 256 kB
    settings = FaissSettings(index="flat", use_gpu=False)
    index = faiss_index.build(docs, settings, progress=False)
    with pytest.raises(DiskFullError, match=rf"^no space left on device writing {re.escape(str(disk.root / 'dense'))}: "
                                            rf"needs more than the [\d.]+ kB written before the disk filled, "):
        faiss_index.save(disk.root / "dense", index, [f"doc{i}" for i in range(len(docs))], settings)
    assert os.listdir(disk.root) == []


def test_load_names_the_missing_file(tmp_path, docs):
    settings = FaissSettings(use_gpu=False)
    faiss_index.save(tmp_path / "dense", faiss_index.build(docs[:3], settings, progress=False), list("abc"), settings)
    (tmp_path / "dense" / "index.faiss").write_bytes(b"not an index")
    with pytest.raises(InputError, match=r"dense/index\.faiss: not a FAISS index"):
        faiss_index.load(tmp_path / "dense")
    (tmp_path / "dense" / "doc_ids.json").unlink()
    with pytest.raises(InputError, match=r"is not a saved FAISS index: doc_ids\.json missing"):
        faiss_index.load(tmp_path / "dense")
    with pytest.raises(InputError, match="no such dense index"):
        faiss_index.load_metadata(tmp_path / "elsewhere")


def test_ivf_with_fewer_vectors_than_clusters_errors_clearly(docs):
    with pytest.raises(ValueError, match="nlist=64 .* got 20"):
        faiss_index.build(docs[:20], FaissSettings(index="ivf", nlist=64, use_gpu=False), progress=False)


def test_settings_from_config_reject_unknown_and_bad_keys():
    assert FaissSettings.from_config({"index": "hnsw", "m": 8}).m == 8
    with pytest.raises(ValueError, match=r"unknown keys \['nprob'\]"):
        FaissSettings.from_config({"index": "ivf", "nlist": 4, "nprob": 2})
    with pytest.raises(ValueError, match="needs 'nlist'"):
        FaissSettings.from_config({"index": "ivf"})
    with pytest.raises(ValueError, match="index must be one of"):
        FaissSettings.from_config({"index": "lsh"})
    with pytest.raises(ValueError, match="ef_search must be a positive integer"):
        FaissSettings.from_config({"index": "hnsw", "ef_search": 0})
    with pytest.raises(ValueError, match="use_gpu"):
        FaissSettings.from_config({"use_gpu": "yes"})


def test_gpu_choice(monkeypatch):
    monkeypatch.setattr(faiss_index, "gpu_available", lambda: False)
    assert not faiss_index.wants_gpu(FaissSettings(use_gpu="auto"))
    with pytest.raises(InputError, match="use_gpu is true"):
        faiss_index.wants_gpu(FaissSettings(use_gpu=True))
    monkeypatch.setattr(faiss_index, "gpu_available", lambda: True)
    assert faiss_index.wants_gpu(FaissSettings(use_gpu="auto"))
    assert not faiss_index.wants_gpu(FaissSettings(use_gpu=False))
    assert not faiss_index.wants_gpu(FaissSettings(index="hnsw", use_gpu="auto"))  # FAISS has no GPU HNSW


def test_search_checks_dimension(docs):
    index = faiss_index.build(docs, FaissSettings(use_gpu=False), progress=False)
    with pytest.raises(ValueError, match="dimension 16, the index has 32"):
        faiss_index.search(index, np.zeros((1, 16), dtype=np.float32), k=3)


def test_settings_file_is_plain_json(tmp_path, docs):
    settings = FaissSettings(index="hnsw", ef_search=77, use_gpu=False)
    index = faiss_index.build(docs[:10], settings, progress=False)
    faiss_index.save(tmp_path / "d", index, list("abcdefghij"), settings)
    assert json.loads((tmp_path / "d" / "settings.json").read_text())["ef_search"] == 77
    assert faiss_index.load(tmp_path / "d")[0].hnsw.efSearch == 77


def build_in_blocks(vectors: np.ndarray, settings: FaissSettings, sizes: list[int], **kwargs):
    builder = faiss_index.IncrementalBuilder(vectors.shape[1], settings, **kwargs)
    start = 0
    for size in sizes:
        builder.add(vectors[start:start + size])
        start += size
    assert start == len(vectors) and builder.ntotal == len(vectors)
    return builder.finish()


def test_incremental_flat_equals_building_from_all_vectors(docs, queries):
    settings = FaissSettings(index="flat", use_gpu=False)
    whole = faiss_index.search(faiss_index.build(docs, settings, progress=False), queries, k=20)
    for expected in (None, len(docs), 1000):  # storage reserved for all, for some (then grown), or not at all
        index = build_in_blocks(docs, settings, [1, 699, 0, 1000, 300], n_expected=expected)
        for got, want in zip(faiss_index.search(index, queries, k=20), whole):
            np.testing.assert_array_equal(got, want)


def test_incremental_ivf_trains_on_the_first_blocks_and_holds_every_vector(docs, queries):
    settings = FaissSettings(index="ivf", nlist=8, nprobe=8, use_gpu=False)
    index = build_in_blocks(docs, settings, [300, 300, 300, 1100], n_train=700)  # training spans three blocks
    trained_on_first = faiss_index.build(docs[:700], settings, progress=False)
    np.testing.assert_array_equal(index.quantizer.reconstruct_n(0, 8), trained_on_first.quantizer.reconstruct_n(0, 8))
    assert index.ntotal == len(docs) and index.nprobe == 8
    flat = faiss_index.build(docs, FaissSettings(index="flat", use_gpu=False), progress=False)
    # nprobe = nlist searches every list: exact, so every vector is in the index once, at its own position.
    for got, want in zip(faiss_index.search(index, queries, 10), faiss_index.search(flat, queries, 10)):
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_incremental_ivf_smaller_than_its_training_size_trains_on_all_vectors(docs):
    settings = FaissSettings(index="ivf", nlist=4, use_gpu=False)
    index = build_in_blocks(docs[:100], settings, [60, 40])  # default n_train: 4 * TRAIN_PER_LIST > 100
    assert index.is_trained and index.ntotal == 100
    with pytest.raises(ValueError, match="nlist=4 .* got 3"):
        build_in_blocks(docs[:3], settings, [2, 1])


def test_incremental_builder_checks_its_blocks(docs):
    builder = faiss_index.IncrementalBuilder(DIM, FaissSettings(use_gpu=False))
    with pytest.raises(ValueError, match="dimension 16 for an index of dimension 32"):
        builder.add(np.zeros((2, 16), dtype=np.float32))
    builder.add(docs[:5].astype(np.float64))  # converted to float32
    assert builder.finish().ntotal == 5
    with pytest.raises(RuntimeError, match="after finish"):
        builder.add(docs[:5])
    with pytest.raises(ValueError, match="nlist=8 .* got 5"):
        faiss_index.IncrementalBuilder(DIM, FaissSettings(index="ivf", nlist=8, use_gpu=False), n_train=5)
