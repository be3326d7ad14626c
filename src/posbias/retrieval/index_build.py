"""A FAISS index built on a CPU from a vectors directory (`posbias.retrieval.vectors`), resumable.

The rows are read from the memory-mapped matrix `CHUNK` at a time and added as the encoding job made them, so the
index is the one encoding and adding in one job made. An HNSW build of MS MARCO v2 takes hours: every
`save_minutes` its index so far is written to the job's `.partial` directory (`posbias.retrieval.partial`) with
the rows it holds, and a killed job rerun reads it back and adds the rest. An IVF index is saved likewise once it
is trained. A flat index is not saved part-way: adding to it copies the rows, which takes as long as writing and
reading a snapshot would.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Mapping

import faiss
from tqdm import tqdm

from posbias.io import atomic_write
from posbias.retrieval import faiss_index
from posbias.retrieval.faiss_index import FaissSettings, IncrementalBuilder
from posbias.retrieval.partial import PartialOutput
from posbias.retrieval.vectors import CHUNK, count_documents, encode_collection, load_vectors
from posbias.settings import fingerprint

log = logging.getLogger(__name__)

SNAPSHOT_FILE = "index.faiss"
SAVE_MINUTES = 30.0  # HNSW over 12M vectors: a snapshot of about 40 GB costs a minute or so to write


def build_dense_index(docs_path: str, index_dir: str, encoder_settings: Mapping, faiss_settings: Mapping,
                      block_size: int = CHUNK) -> int:
    """Encode a documents JSONL into `<index_dir>.vectors` and build the FAISS index from it, in one process (the
    workflow runs the two as jobs of their own, the first on a GPU); returns the number of documents. The vectors
    stay, and a rerun with other FAISS settings reuses them."""
    index_config = FaissSettings.from_config(faiss_settings)
    faiss_index.check_trainable(count_documents(docs_path), index_config)  # before hours of encoding, not after
    vectors_dir = f"{index_dir}.vectors"
    encode_collection(docs_path, vectors_dir, encoder_settings, block_size)
    return build_index(vectors_dir, index_dir, faiss_settings, block_size)


def build_index(vectors_dir: str, index_dir: str, faiss_settings: Mapping, chunk_size: int = CHUNK,
                save_minutes: float = SAVE_MINUTES) -> int:
    """Build and save (`faiss_index.save`) the index of `faiss_settings` over the vectors of `vectors_dir`,
    resuming an interrupted run of the same job; returns the number of vectors."""
    settings = FaissSettings.from_config(faiss_settings)
    matrix, doc_ids, metadata = load_vectors(vectors_dir)
    faiss_index.check_trainable(len(matrix), settings)
    partial = PartialOutput(index_dir, fingerprint(vectors=metadata["fingerprint"], chunk=chunk_size,
                                                   faiss=dataclasses.asdict(settings)))
    done = partial.start()["rows"]
    snapshot = partial.directory / SNAPSHOT_FILE
    resume = faiss.read_index(str(snapshot)) if done and snapshot.is_file() else None
    done = resume.ntotal if resume is not None else 0
    builder = IncrementalBuilder(matrix.shape[1], settings, n_expected=len(matrix), resume=resume)
    saved = time.monotonic()
    with tqdm(total=len(matrix), initial=done, desc="FAISS add", unit="vector", mininterval=10) as bar:
        for start in range(done, len(matrix), chunk_size):
            builder.add(matrix[start:start + chunk_size])  # one chunk read from the map at a time
            bar.update(min(chunk_size, len(matrix) - start))
            if builder.ntotal < len(matrix) and time.monotonic() - saved >= save_minutes * 60:
                _save_snapshot(builder, partial)
                saved = time.monotonic()
    index = builder.finish()
    faiss_index.save(index_dir, index, doc_ids, settings,
                     metadata={key: metadata[key] for key in ("encoder", "numerics")})
    partial.discard()
    log.info("built a %s index of %d vectors from %s at %s", settings.index, len(matrix), vectors_dir, index_dir)
    return len(matrix)


def _save_snapshot(builder: IncrementalBuilder, partial: PartialOutput) -> None:
    index = builder.snapshot()
    if index is None:
        return
    with atomic_write(partial.directory / SNAPSHOT_FILE, "wb") as out:
        faiss.write_index(index, faiss.PyCallbackIOWriter(out.write))
    partial.save(index.ntotal)
    log.info("saved the index so far (%d of its vectors) in %s", index.ntotal, partial.directory)
