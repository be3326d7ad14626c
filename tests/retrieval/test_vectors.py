"""The GPU half of a dense index: a collection encoded into a memory-mapped matrix, resumed after a kill."""

import json
import re

import numpy as np
import pytest

from posbias.errors import DiskFullError, InputError
from posbias.io import write_documents
from posbias.retrieval import vectors
from posbias.retrieval.dense import DenseEncoder
from posbias.retrieval.partial import PROGRESS_FILE
from posbias.retrieval.vectors import DOC_IDS_FILE, METADATA_FILE, VECTORS_FILE, encode_collection, load_vectors

ENCODER = {"model": "offline:all-MiniLM-L6-v2", "pooling": "mean", "max_passage_tokens": 64, "batch_size": 2,
           "device": "cpu"}
TEXTS = ["the capital of zorvia is mendal, a city on the river", "zorvia has green hills and a capital",
         "the bakery opens early on sundays and sells bread", "mount kel is the tallest mountain of brel",
         "mendal hosts the parliament of zorvia", "bread and cakes from the old bakery in mendal",
         "rivers of brel run from mount kel to the sea", "a quiet village far from any capital city"]
CHUNK = 3  # 8 documents: chunks of 3, 3 and 2


class Killed(Exception):
    """Stands for the job being killed part-way."""


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    path = tmp_path_factory.mktemp("docs") / "docs.jsonl"
    write_documents(path, [{"id": f"d{i}", "text": text} for i, text in enumerate(TEXTS)])
    return path


@pytest.fixture(scope="module")
def uninterrupted(docs, tmp_path_factory):
    out = tmp_path_factory.mktemp("whole") / "vectors"
    assert encode_collection(str(docs), str(out), ENCODER, chunk_size=CHUNK) == len(TEXTS)
    return out


def kill_after(monkeypatch, chunks: int) -> list:
    """Make encoding fail after `chunks` chunks; the chunks each session encodes are recorded."""
    encoded, real = [], DenseEncoder.encode_passages

    def encode(self, texts, progress=True):
        if len(encoded) == chunks:
            raise Killed()
        encoded.append(len(texts))
        return real(self, texts, progress)

    monkeypatch.setattr(DenseEncoder, "encode_passages", encode)
    return encoded


def test_the_matrix_is_a_float32_npy_with_a_doc_id_per_row(uninterrupted):
    matrix, doc_ids, metadata = load_vectors(uninterrupted)
    assert isinstance(matrix, np.memmap) and matrix.dtype == np.float32 and matrix.shape == (len(TEXTS), 384)
    assert doc_ids == [f"d{i}" for i in range(len(TEXTS))]
    assert metadata["numerics"] == {"device": "cpu", "precision": "fp32"} and metadata["encoder"]["pooling"] == "mean"
    expected = DenseEncoder.from_config(ENCODER).encode_passages(TEXTS[3:6], progress=False)
    np.testing.assert_array_equal(matrix[3:6], expected)  # a chunk is encoded as the index build always did
    assert not uninterrupted.with_name("vectors.partial").exists()


def test_a_killed_encoding_resumes_after_its_last_chunk_to_the_same_bytes(docs, uninterrupted, tmp_path,
                                                                         monkeypatch):
    out = tmp_path / "vectors"
    first = kill_after(monkeypatch, chunks=1)
    with pytest.raises(Killed):
        encode_collection(str(docs), str(out), ENCODER, chunk_size=CHUNK)
    partial = tmp_path / "vectors.partial"
    assert not out.exists()  # never a complete-looking output before the end
    assert json.loads((partial / PROGRESS_FILE).read_text())["rows"] == CHUNK and first == [CHUNK]
    monkeypatch.undo()
    second = kill_after(monkeypatch, chunks=10)
    encode_collection(str(docs), str(out), ENCODER, chunk_size=CHUNK)
    assert second == [3, 2]  # the first chunk is not encoded again
    for name in (VECTORS_FILE, DOC_IDS_FILE, METADATA_FILE):
        assert (out / name).read_bytes() == (uninterrupted / name).read_bytes(), name
    assert not partial.exists()


def test_a_disk_too_small_for_the_matrix_is_one_line_before_encoding_and_more_space_encodes_it(docs, uninterrupted,
                                                                                                small_disk):
    disk = small_disk("8k")  # the matrix takes 12.3 kB
    out = disk.root / "vectors"
    # Without its space allocated first, the first row written through the map would kill the process (SIGBUS).
    with pytest.raises(DiskFullError, match=rf"^no space left on device writing {re.escape(str(out))}: needs about "
                                            rf"12\.3 kB, 8\.2 kB free on {re.escape(str(disk.root))}$"):
        encode_collection(str(docs), str(out), ENCODER, chunk_size=CHUNK)
    assert not out.exists() and list((disk.root / "vectors.partial").iterdir()) == []  # the matrix went too

    disk.resize("1m")
    encode_collection(str(docs), str(out), ENCODER, chunk_size=CHUNK)
    assert (out / VECTORS_FILE).read_bytes() == (uninterrupted / VECTORS_FILE).read_bytes()


def test_work_on_other_documents_is_discarded_not_resumed(docs, tmp_path, monkeypatch):
    out = tmp_path / "vectors"
    kill_after(monkeypatch, chunks=1)
    with pytest.raises(Killed):
        encode_collection(str(docs), str(out), ENCODER, chunk_size=CHUNK)
    monkeypatch.undo()
    other = tmp_path / "other.jsonl"
    write_documents(other, [{"id": f"x{i}", "text": text} for i, text in enumerate(reversed(TEXTS))])
    encoded = kill_after(monkeypatch, chunks=10)
    encode_collection(str(other), str(out), ENCODER, chunk_size=CHUNK)
    assert encoded == [3, 3, 2]
    matrix, doc_ids, _ = load_vectors(out)
    np.testing.assert_array_equal(matrix[0], DenseEncoder.from_config(ENCODER).encode_passages([TEXTS[-1]])[0])
    assert doc_ids[0] == "x0"


def test_finished_vectors_are_not_encoded_again(docs, uninterrupted, monkeypatch):
    encoded = kill_after(monkeypatch, chunks=0)  # any encoding would fail
    assert encode_collection(str(docs), str(uninterrupted), ENCODER, chunk_size=CHUNK) == len(TEXTS)
    assert encoded == []


def test_an_empty_collection_fails_before_the_encoder_loads(tmp_path, monkeypatch):
    (tmp_path / "docs.jsonl").write_text("\n")
    monkeypatch.setattr(vectors, "DenseEncoder", None)  # loading it would fail with another error
    with pytest.raises(InputError, match="docs.jsonl: no documents to index: the file is empty"):
        encode_collection(str(tmp_path / "docs.jsonl"), str(tmp_path / "vectors"), ENCODER)


@pytest.mark.parametrize("damage,message", [
    (lambda d: (d / VECTORS_FILE).unlink(), r"is not a vectors directory \(rule dense_encode\): vectors.npy missing"),
    (lambda d: (d / DOC_IDS_FILE).write_text('["d0"]'), r": 1 doc ids for 8 vectors; encode it again"),
    (lambda d: (d / VECTORS_FILE).write_bytes(b"not numpy"), r"vectors.npy: not a vector matrix"),
    (lambda d: np.save(d / VECTORS_FILE, np.zeros((8, 4), dtype=np.float64)), r"expected a 2-D float32 matrix"),
])
def test_a_damaged_vectors_directory_is_named_in_one_line(uninterrupted, tmp_path, damage, message):
    import shutil

    copy = tmp_path / "vectors"
    shutil.copytree(uninterrupted, copy)
    damage(copy)
    with pytest.raises(InputError, match=message) as raised:
        load_vectors(copy)
    assert "\n" not in str(raised.value)


def test_a_job_given_a_gpu_it_cannot_see_stops_before_reading_the_documents(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_JOB_GPUS", "0,1")
    monkeypatch.delenv("POSBIAS_CPU_DESPITE_ALLOTTED_GPU", raising=False)
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    monkeypatch.setattr(vectors, "count_documents", None)  # reading the documents would fail with another error
    with pytest.raises(InputError, match="the scheduler gave this job a GPU"):
        encode_collection(str(tmp_path / "docs.jsonl"), str(tmp_path / "vectors"), {**ENCODER, "device": "auto"})
