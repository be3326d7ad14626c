"""The CPU half of a dense index: a FAISS index built from a vectors directory, resumed after a kill."""

import json

import faiss
import numpy as np
import pytest

from posbias.retrieval import faiss_index
from posbias.retrieval.faiss_index import FaissSettings, IncrementalBuilder
from posbias.retrieval.index_build import SNAPSHOT_FILE, build_index
from posbias.retrieval.partial import PROGRESS_FILE
from posbias.retrieval.vectors import DOC_IDS_FILE, METADATA_FILE, VECTORS_FILE

N, DIM, CHUNK = 600, 16, 100
SETTINGS = {"flat": {"index": "flat", "use_gpu": False},
            "hnsw": {"index": "hnsw", "m": 8, "ef_construction": 40, "use_gpu": False},
            "ivf": {"index": "ivf", "nlist": 4, "nprobe": 2, "use_gpu": False}}
METADATA = {"encoder": {"model": "m", "pooling": "cls"}, "numerics": {"device": "cuda", "precision": "fp16"}}


class Killed(Exception):
    """Stands for the job being killed part-way."""


@pytest.fixture(autouse=True)
def one_thread():
    """HNSW inserts in parallel in an order that varies with more threads; one makes builds comparable bit for bit."""
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(threads)


@pytest.fixture(scope="module")
def matrix():
    rows = np.random.default_rng(0).standard_normal((N, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def vectors_dir(matrix, tmp_path_factory):
    """A vectors directory as the encoding job writes it."""
    root = tmp_path_factory.mktemp("vectors")
    written = np.lib.format.open_memmap(root / VECTORS_FILE, mode="w+", dtype=np.float32, shape=matrix.shape)
    written[:] = matrix
    written.flush()
    (root / DOC_IDS_FILE).write_text(json.dumps([f"d{i}" for i in range(N)]))
    (root / METADATA_FILE).write_text(json.dumps({**METADATA, "fingerprint": "0123456789abcdef"}))
    return root


def kill_after(monkeypatch, chunks: int) -> list:
    """Make the build fail after `chunks` chunks are added; the chunks each session adds are recorded."""
    added, real = [], IncrementalBuilder.add

    def add(self, block):
        if len(added) == chunks:
            raise Killed()
        added.append(len(block))
        real(self, block)

    monkeypatch.setattr(IncrementalBuilder, "add", add)
    return added


def test_the_index_from_the_map_is_the_index_built_in_memory(vectors_dir, matrix, tmp_path):
    assert build_index(str(vectors_dir), str(tmp_path / "index"), SETTINGS["flat"], chunk_size=CHUNK) == N
    index, doc_ids = faiss_index.load(tmp_path / "index")
    in_memory = faiss_index.build(matrix, FaissSettings(**SETTINGS["flat"]), progress=False)
    np.testing.assert_array_equal(faiss.serialize_index(index), faiss.serialize_index(in_memory))
    queries = matrix[:5] + 0.1
    for found, expected in zip(faiss_index.search(index, queries, 10), faiss_index.search(in_memory, queries, 10)):
        np.testing.assert_array_equal(found, expected)
    assert doc_ids == [f"d{i}" for i in range(N)]
    assert faiss_index.load_metadata(tmp_path / "index") == METADATA  # what hybrid retrieval checks its encoder by
    assert not (tmp_path / "index.partial").exists()


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_a_killed_build_resumes_from_its_snapshot_to_the_same_index(vectors_dir, tmp_path, monkeypatch, kind):
    whole = tmp_path / "whole"
    build_index(str(vectors_dir), str(whole), SETTINGS[kind], chunk_size=CHUNK)
    out = tmp_path / "index"
    kill_after(monkeypatch, chunks=3)
    with pytest.raises(Killed):
        build_index(str(vectors_dir), str(out), SETTINGS[kind], chunk_size=CHUNK, save_minutes=0)
    partial = tmp_path / "index.partial"
    assert not out.exists()
    assert faiss.read_index(str(partial / SNAPSHOT_FILE)).ntotal == 3 * CHUNK
    assert json.loads((partial / PROGRESS_FILE).read_text())["rows"] == 3 * CHUNK
    monkeypatch.undo()
    added = kill_after(monkeypatch, chunks=100)
    build_index(str(vectors_dir), str(out), SETTINGS[kind], chunk_size=CHUNK, save_minutes=0)
    assert added == [CHUNK] * 3  # only the rows after the snapshot
    for name in (faiss_index.INDEX_FILE, faiss_index.DOC_IDS_FILE, faiss_index.METADATA_FILE):
        assert (out / name).read_bytes() == (whole / name).read_bytes(), name
    assert not partial.exists()


def test_a_flat_build_saves_no_snapshot_and_other_settings_start_over(vectors_dir, tmp_path, monkeypatch):
    out = tmp_path / "index"
    kill_after(monkeypatch, chunks=3)
    with pytest.raises(Killed):
        build_index(str(vectors_dir), str(out), SETTINGS["flat"], chunk_size=CHUNK, save_minutes=0)
    assert not (tmp_path / "index.partial" / SNAPSHOT_FILE).exists()
    with pytest.raises(Killed):
        build_index(str(vectors_dir), str(out), SETTINGS["hnsw"], chunk_size=CHUNK, save_minutes=0)
    monkeypatch.undo()
    added = kill_after(monkeypatch, chunks=100)
    build_index(str(vectors_dir), str(out), {**SETTINGS["hnsw"], "ef_construction": 20}, chunk_size=CHUNK,
                save_minutes=0)
    assert added == [CHUNK] * 6  # another ef_construction: the HNSW snapshot is not resumed
    assert faiss_index.load(out)[0].hnsw.efConstruction == 20


def test_an_ivf_index_with_more_clusters_than_vectors_fails_before_adding(vectors_dir, tmp_path):
    with pytest.raises(ValueError, match=f"nlist=1000 clusters need at least as many vectors.*got {N}"):
        build_index(str(vectors_dir), str(tmp_path / "index"), {"index": "ivf", "nlist": 1000})
    assert not (tmp_path / "index").exists() and not (tmp_path / "index.partial").exists()
