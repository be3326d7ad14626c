"""A collection's dense vectors as a memory-mapped matrix on disk: the GPU half of a dense index.

A vectors directory holds `vectors.npy` (float32, one row per document in the order of the documents file, an
`.npy` that `np.load(..., mmap_mode="r")` maps without reading it), `doc_ids.json` (the id of each row) and
`metadata.json` (the encoder that made the rows, where and in which precision, and a fingerprint). The FAISS
index is built from it on a CPU (`posbias.retrieval.index_build`), so the GPU job ends when encoding does, and
changing a retriever's FAISS settings reuses its vectors.

Encoding goes `CHUNK` documents at a time (the block size the index build has always encoded in, so the rows are
those it computed); after each chunk the matrix is flushed and the rows done recorded
(`posbias.retrieval.partial`), and a killed job rerun with the same inputs continues after the last recorded chunk.
Every chunk is encoded as it would be without the interruption, so the finished matrix is the same bytes.
The matrix's space is allocated before the first chunk: a disk too small for it is a `DiskFullError` naming the
output and the matrix's size at once, never a crash hours in.
"""

from __future__ import annotations

import json
import logging
import os
import platform
from typing import Mapping

import numpy as np
import torch
from tqdm import tqdm

from posbias.device import pick_device
from posbias.errors import InputError
from posbias.disk_space import full_disk_reported
from posbias.io import batched, iter_documents, numbered_lines, read_json
from posbias.retrieval.dense import DenseEncoder
from posbias.retrieval.encoder_settings import EncoderSettings
from posbias.retrieval.partial import PartialOutput, file_identity
from posbias.settings import fingerprint

log = logging.getLogger(__name__)

VECTORS_FILE, DOC_IDS_FILE, METADATA_FILE = "vectors.npy", "doc_ids.json", "metadata.json"
CHUNK = 50_000  # documents encoded between two progress records (MS MARCO v2: about 240 chunks)


def count_documents(docs_path: str | os.PathLike) -> int:
    """The documents of a JSONL file (its non-blank lines); an empty file is an error."""
    n_docs = sum(1 for _ in numbered_lines(docs_path))
    if not n_docs:
        raise InputError(f"{docs_path}: no documents to index: the file is empty")
    return n_docs


def encode_collection(docs_path: str, out_dir: str, encoder_settings: Mapping, chunk_size: int = CHUNK) -> int:
    """Encode the documents of a JSONL file into the vectors directory `out_dir`, resuming an interrupted run of
    the same job; returns the number of documents."""
    pick_device(EncoderSettings.from_config(encoder_settings).device)  # a missing GPU stops the job at once
    n_docs = count_documents(docs_path)
    encoder = DenseEncoder.from_config(encoder_settings)
    metadata = {"encoder": encoder.settings.vector_identity(), "numerics": encoder.numerics()}
    # numerics too, and the processor and torch build: rows of an fp16 GPU session and an fp32 CPU one, or of two GPU
    # models (a retry on another node), would make a matrix no single run makes
    partial = PartialOutput(out_dir, fingerprint(docs=file_identity(docs_path), n_docs=n_docs, chunk=chunk_size,
                                                 dim=encoder.dim, processor=_processor(encoder.device),
                                                 torch=torch.__version__, **metadata))
    if _finished(out_dir, partial.fingerprint):
        log.info("%s holds these vectors already", out_dir)
        return n_docs
    with full_disk_reported(out_dir, needs=n_docs * encoder.dim * np.dtype(np.float32).itemsize) as write:
        done = partial.start()["rows"]
        path = partial.directory / VECTORS_FILE
        done = done if path.is_file() else 0  # a record without its matrix: start over
        if not done:  # nothing to resume: a new matrix, removed if its space is lacking
            write.staging = path
            # its header, and rows that take no space yet; the map is dropped at once: a live map would keep the
            # blocks of the file after it is removed
            np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n_docs, encoder.dim))
        _allocate(path)
    matrix = np.lib.format.open_memmap(path, mode="r+")
    try:
        doc_ids = _encode_into(matrix, docs_path, encoder, chunk_size, done, partial)
    except InputError:  # a bad document: the fixed file is another input, which could not resume this work
        partial.discard()
        raise
    finally:
        del matrix  # unmapped before the file moves
    with full_disk_reported(out_dir):
        (partial.directory / DOC_IDS_FILE).write_text(json.dumps(doc_ids), encoding="utf-8")
        (partial.directory / METADATA_FILE).write_text(json.dumps({**metadata, "fingerprint": partial.fingerprint}),
                                                       encoding="utf-8")
    partial.finish([VECTORS_FILE, DOC_IDS_FILE, METADATA_FILE])
    log.info("encoded %d documents from %s into %s", n_docs, docs_path, out_dir)
    return n_docs


def _encode_into(matrix: np.ndarray, docs_path: str, encoder: DenseEncoder, chunk_size: int, done: int,
                 partial: PartialOutput) -> list[str]:
    """Encode the chunks after the first `done` rows into `matrix`, recording each; the doc ids of all rows."""
    doc_ids: list[str] = []
    with tqdm(total=len(matrix), initial=done, desc="encoding documents", unit="doc", mininterval=10) as bar:
        for block in batched(iter_documents(docs_path), chunk_size):
            start = len(doc_ids)
            doc_ids += [doc_id for doc_id, _ in block]
            if len(doc_ids) <= done:  # encoded by an earlier session
                continue
            matrix[start:len(doc_ids)] = encoder.encode_passages([text for _, text in block], progress=False)
            matrix.flush()  # the rows on disk before the record that counts them
            partial.save(len(doc_ids))
            bar.update(len(block))
    return doc_ids


def _allocate(path) -> None:
    """Give every block of the (sparse) matrix file its space now: a full disk is then an error before encoding
    starts, not a SIGBUS that kills the job when a row is written through the map."""
    if hasattr(os, "posix_fallocate"):  # Linux; the C library emulates it where the file system cannot
        with open(path, "r+b") as handle:
            os.posix_fallocate(handle.fileno(), 0, os.fstat(handle.fileno()).st_size)


def _processor(device: torch.device) -> str:
    """What computes the rows: the GPU's model, or the CPU's architecture."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else platform.machine()


def _finished(out_dir: str, fingerprint: str) -> bool:
    try:
        return read_json(os.path.join(out_dir, METADATA_FILE)).get("fingerprint") == fingerprint
    except (OSError, ValueError, AttributeError):  # none, or not ours: encode
        return False


def load_vectors(directory: str | os.PathLike) -> tuple[np.ndarray, list[str], dict]:
    """The matrix (memory-mapped, read-only), the doc id of each row and the metadata of a vectors directory."""
    root = str(directory)
    missing = [name for name in (VECTORS_FILE, DOC_IDS_FILE, METADATA_FILE)
               if not os.path.isfile(os.path.join(root, name))]
    if missing:
        raise InputError(f"{root} is not a vectors directory (rule dense_encode): {', '.join(missing)} missing")
    try:
        matrix = np.load(os.path.join(root, VECTORS_FILE), mmap_mode="r")
    except ValueError as err:  # numpy's word for a damaged or foreign .npy
        raise InputError(f"{root}/{VECTORS_FILE}: not a vector matrix ({err})") from None
    doc_ids, metadata = read_json(os.path.join(root, DOC_IDS_FILE)), read_json(os.path.join(root, METADATA_FILE))
    if matrix.ndim != 2 or matrix.dtype != np.float32:
        raise InputError(f"{root}/{VECTORS_FILE}: expected a 2-D float32 matrix, got {matrix.dtype} {matrix.shape}")
    if not isinstance(doc_ids, list) or len(doc_ids) != len(matrix):
        count = len(doc_ids) if isinstance(doc_ids, list) else "no list of"
        raise InputError(f"{root}: {count} doc ids for {len(matrix)} vectors; encode it again")
    if not isinstance(metadata, dict) or "fingerprint" not in metadata:
        raise InputError(f"{root}/{METADATA_FILE}: expected a JSON object with the vectors' fingerprint")
    return matrix, doc_ids, metadata
