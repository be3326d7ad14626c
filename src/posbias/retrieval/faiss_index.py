"""FAISS k-NN indexes over unit vectors with the inner-product metric (= cosine).

Kinds: `flat` (exact), `ivf` (inverted lists: `nlist` clusters trained on the
vectors, `nprobe` searched per query) and `hnsw` (graph: `m` links per node,
`ef_construction`, `ef_search`). An index lives in a directory: `index.faiss`,
`doc_ids.json` (the document id of each row), `settings.json` (so that
search-time parameters such as nprobe survive a reload) and `metadata.json`
(whatever the caller records, e.g. the encoder that made the vectors). Saved indexes are
always CPU indexes; `use_gpu` decides where they are built and searched.
`IncrementalBuilder` builds an index from blocks of vectors as they are made, without
holding the collection's vectors twice, and continues from a snapshot of an interrupted build;
`build` is the same for an array in memory.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import faiss
import numpy as np
from tqdm import tqdm

from posbias.errors import InputError, first_line
from posbias.io import atomic_directory, read_json
from posbias.settings import from_section

KINDS = ("flat", "ivf", "hnsw")
INDEX_FILE, DOC_IDS_FILE, SETTINGS_FILE, METADATA_FILE = "index.faiss", "doc_ids.json", "settings.json", "metadata.json"
ADD_BLOCK = 16384  # vectors added per step, for a progress bar on large builds
RESUMABLE_KINDS = ("ivf", "hnsw")  # kinds whose build is worth saving part-way (IncrementalBuilder.snapshot)

_gpu_resources = None  # one StandardGpuResources per process; GPU indexes must not outlive it


@dataclass(frozen=True)
class FaissSettings:
    """The config's `faiss` section: the kind of index (`index`) and its parameters."""

    index: str = "flat"
    nlist: int | None = None  # ivf: clusters; no default, it depends on the collection size
    nprobe: int = 8
    m: int = 32
    ef_construction: int = 200
    ef_search: int = 128
    use_gpu: str | bool = "auto"

    def __post_init__(self):
        if self.index not in KINDS:
            raise InputError(f"faiss settings: index must be one of {KINDS}, got {self.index!r}")
        if self.use_gpu not in ("auto", True, False):
            raise InputError(f"faiss settings: use_gpu must be 'auto', true or false, got {self.use_gpu!r}")
        if self.index == "ivf" and self.nlist is None:
            raise InputError("faiss settings: index 'ivf' needs 'nlist' (number of clusters)")
        for key in ("nlist", "nprobe", "m", "ef_construction", "ef_search"):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise InputError(f"faiss settings: {key} must be a positive integer, got {value!r}")

    @classmethod
    def from_config(cls, section: Mapping) -> "FaissSettings":
        return from_section(cls, section, "faiss settings")


def gpu_available() -> bool:
    return hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0


def wants_gpu(settings: FaissSettings) -> bool:
    """True when the index should live on a GPU; use_gpu=true without a GPU build or GPU is an error."""
    if settings.use_gpu is True and not gpu_available():
        raise InputError("faiss settings: use_gpu is true, but FAISS has no GPU support here "
                           "(install faiss-gpu and check that a GPU is visible)")
    if settings.use_gpu is True and settings.index == "hnsw":
        raise InputError("faiss settings: use_gpu is true, but FAISS has no GPU HNSW index; use flat or ivf")
    # FAISS has no GPU HNSW, so 'auto' keeps HNSW on the CPU.
    return settings.use_gpu is True or (settings.use_gpu == "auto" and settings.index != "hnsw" and gpu_available())


def build(vectors: np.ndarray, settings: FaissSettings, progress: bool = True) -> faiss.Index:
    """An index over `vectors` (rows = documents), trained on all of them where the kind needs training."""
    vectors = _as_float32_rows(vectors)
    builder = IncrementalBuilder(vectors.shape[1], settings, n_train=len(vectors) or None, n_expected=len(vectors),
                                 progress=progress)
    builder.add(vectors)
    return builder.finish()


class IncrementalBuilder:
    """Builds an index from blocks of vectors as they arrive (e.g. as a collection is encoded), holding no
    copy of the collection: `add(block)` any number of times, then `finish()` for the index.

    `flat` and `hnsw` add each block at once. `ivf` must be trained before anything is added: its first
    `n_train` vectors are copied into a training buffer, k-means runs on them once the buffer is full (or in
    `finish()`, on all vectors, if the collection is smaller), they are added, and later blocks are added
    directly. The default `n_train` is `nlist * TRAIN_PER_LIST`. FAISS recommends 30 to 256 training vectors
    per centroid (it warns below 39 and subsamples above 256); 64 keeps the buffer at `nlist * 64 * dim * 4`
    bytes (0.8 GB for nlist 4096 and dimension 768) while training on far more than the minimum. Training on
    the first vectors rather than a sample of all assumes the collection's order is not topical.

    `n_expected`, the number of vectors to come if known, lets a CPU `flat` or `hnsw` index allocate its vector
    storage once: FAISS grows it like a `std::vector`, and the copy at the last doubling alone can cost as much
    memory as the vectors. More vectors than expected are fine (storage grows as without it).
    """

    TRAIN_PER_LIST = 64

    def __init__(self, dim: int, settings: FaissSettings, n_train: int | None = None,
                 n_expected: int | None = None, progress: bool = False, resume: faiss.Index | None = None):
        if settings.index == "ivf":
            n_train = settings.nlist * self.TRAIN_PER_LIST if n_train is None else n_train
            check_trainable(n_train, settings)
        self.dim, self.settings, self.n_train = dim, settings, n_train
        self._index = _empty_index(dim, settings) if resume is None else _resumed(resume, dim, settings)
        if wants_gpu(settings):
            self._index = to_gpu(self._index)
        elif n_expected:
            _reserve(self._index, n_expected)
        self._train_buffer: np.ndarray | None = None
        self._buffered = 0
        self._bar = tqdm(desc="FAISS add", unit="vector", disable=not progress, mininterval=5)

    @property
    def ntotal(self) -> int:
        """Vectors added so far, including those waiting in the training buffer."""
        return self._index.ntotal + self._buffered

    def snapshot(self) -> faiss.Index | None:
        """The index so far, as a CPU index that `resume=` continues from, or None where a snapshot is not worth
        saving: a flat index (adding to it is a copy, as fast as reading the snapshot back) or an IVF index still
        gathering its training vectors."""
        if self.settings.index not in RESUMABLE_KINDS or self._buffered or not self._index.is_trained:
            return None
        return to_cpu(self._index)

    def add(self, block: np.ndarray) -> None:
        """Add the rows of `block` (float32, `dim` columns; other float types are converted)."""
        if self._index is None:
            raise RuntimeError("IncrementalBuilder.add after finish()")
        block = _as_float32_rows(block)
        if block.shape[1] != self.dim:
            raise ValueError(f"a block of dimension {block.shape[1]} for an index of dimension {self.dim}")
        if not self._index.is_trained:
            block = self._take_for_training(block)
        self._add(block)

    def _take_for_training(self, block: np.ndarray) -> np.ndarray:
        """Buffer rows of `block` for training, train (and add them) once there are `n_train`; the rest."""
        if self._buffered == 0 and len(block) >= self.n_train:  # one block suffices: train on a view, no copy
            self._train_and_add(block[:self.n_train])
            return block[self.n_train:]
        if self._train_buffer is None:
            self._train_buffer = np.empty((self.n_train, self.dim), dtype=np.float32)
        taken = min(len(block), self.n_train - self._buffered)
        self._train_buffer[self._buffered:self._buffered + taken] = block[:taken]
        self._buffered += taken
        if self._buffered == self.n_train:
            self._train_and_add(self._train_buffer)
        return block[taken:]

    def finish(self) -> faiss.Index:
        """The index, with the search parameters of the settings; the builder cannot be used after."""
        if self._index is None:
            raise RuntimeError("IncrementalBuilder.finish called twice")
        if not self._index.is_trained:  # fewer vectors than n_train: train on all of them
            check_trainable(self._buffered, self.settings)
            self._train_and_add(self._train_buffer[:self._buffered])
        self._bar.close()
        index, self._index = self._index, None
        set_search_parameters(index, self.settings)
        return index

    def _train_and_add(self, vectors: np.ndarray) -> None:
        check_trainable(len(vectors), self.settings)
        self._index.train(vectors)
        self._add(vectors)
        self._train_buffer, self._buffered = None, 0

    def _add(self, vectors: np.ndarray) -> None:
        for start in range(0, len(vectors), ADD_BLOCK):
            self._index.add(vectors[start:start + ADD_BLOCK])
            self._bar.update(min(ADD_BLOCK, len(vectors) - start))


def _reserve(index: faiss.Index, n_vectors: int) -> None:
    """Give the flat vector storage of a CPU index (flat, or HNSW's) room for `n_vectors`: growing a `std::vector`
    to that size and back to its vectors keeps its capacity, so later adds do not reallocate."""
    flat = faiss.downcast_index(index.storage) if isinstance(index, faiss.IndexHNSW) else index
    if isinstance(flat, faiss.IndexFlatCodes) and flat.ntotal < n_vectors:
        flat.codes.resize(n_vectors * flat.code_size)
        flat.codes.resize(flat.ntotal * flat.code_size)


def _resumed(index: faiss.Index, dim: int, settings: FaissSettings) -> faiss.Index:
    """A snapshot (`IncrementalBuilder.snapshot`) read back, ready to take the vectors after its own."""
    if index.d != dim or type(index) is not type(_empty_index(dim, settings)):
        raise ValueError(f"a {type(index).__name__} of dimension {index.d} cannot resume a {settings.index} index "
                         f"of dimension {dim}")
    if settings.index == "hnsw":
        # The level of each new node is drawn from a generator the file does not keep (it restarts at its seed):
        # replaying the draws of the nodes already there makes the rest of the graph the one an uninterrupted
        # build makes (bit for bit with one thread; with more, HNSW's parallel insertion varies anyway).
        for _ in range(index.ntotal):
            index.hnsw.random_level()
    return index


def check_trainable(n_vectors: int, settings: FaissSettings) -> None:
    """IVF k-means needs at least one vector per cluster; say so before anything expensive runs."""
    if settings.index == "ivf" and n_vectors < settings.nlist:
        raise InputError(f"faiss settings: nlist={settings.nlist} clusters need at least as many vectors "
                         f"to train on, got {n_vectors}; lower nlist")


def _empty_index(dim: int, settings: FaissSettings) -> faiss.Index:
    if settings.index == "flat":
        return faiss.IndexFlatIP(dim)
    if settings.index == "ivf":
        return faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, settings.nlist, faiss.METRIC_INNER_PRODUCT)
    index = faiss.IndexHNSWFlat(dim, settings.m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = settings.ef_construction
    return index


def set_search_parameters(index: faiss.Index, settings: FaissSettings) -> None:
    if settings.index == "ivf":
        index.nprobe = settings.nprobe  # an attribute of both the CPU and the GPU IVF index
    elif settings.index == "hnsw":
        index.hnsw.efSearch = settings.ef_search


def to_gpu(index: faiss.Index) -> faiss.Index:
    global _gpu_resources
    if _gpu_resources is None:
        _gpu_resources = faiss.StandardGpuResources()
    return faiss.index_cpu_to_gpu(_gpu_resources, 0, index)


def to_cpu(index: faiss.Index) -> faiss.Index:
    if hasattr(faiss, "GpuIndex") and isinstance(index, faiss.GpuIndex):
        return faiss.index_gpu_to_cpu(index)
    return index


def search(index: faiss.Index, query_vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k (scores, row positions) per query, best first; position -1 marks a missing hit."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    queries = _as_float32_rows(query_vectors)
    if queries.shape[1] != index.d:
        raise ValueError(f"query vectors have dimension {queries.shape[1]}, the index has {index.d}")
    return index.search(queries, k)


def save(directory: str | Path, index: faiss.Index, doc_ids: Sequence[str], settings: FaissSettings,
         metadata: Mapping | None = None) -> None:
    """Write the index, its doc ids, settings and `metadata` (any JSON object, e.g. how the vectors were
    made) into a staging directory, then rename it into place (`posbias.io.atomic_directory`)."""
    if len(doc_ids) != index.ntotal:
        raise ValueError(f"{len(doc_ids)} doc ids for an index of {index.ntotal} vectors")
    with atomic_directory(directory) as staging:
        faiss.write_index(to_cpu(index), str(staging / INDEX_FILE))
        with open(staging / DOC_IDS_FILE, "w", encoding="utf-8") as out:  # streamed: no second copy of the ids
            json.dump(doc_ids if isinstance(doc_ids, (list, tuple)) else list(doc_ids), out)
        (staging / SETTINGS_FILE).write_text(json.dumps(dataclasses.asdict(settings)), encoding="utf-8")
        (staging / METADATA_FILE).write_text(json.dumps(dict(metadata or {})), encoding="utf-8")


def load(directory: str | Path) -> tuple[faiss.Index, list[str]]:
    """The saved index (moved to the GPU if its settings ask for it) and the doc id of each row."""
    root = _saved_index(directory, INDEX_FILE, DOC_IDS_FILE, SETTINGS_FILE)
    saved = read_json(root / SETTINGS_FILE)
    if not isinstance(saved, dict):
        raise InputError(f"{root / SETTINGS_FILE}: expected a JSON object of faiss settings")
    settings = FaissSettings.from_config(saved)
    try:
        index = faiss.read_index(str(root / INDEX_FILE))
    except RuntimeError as err:  # FAISS reports a damaged file as a C++ exception with a long trace
        raise InputError(f"{root / INDEX_FILE}: not a FAISS index ({first_line(err)})") from None
    doc_ids = read_json(root / DOC_IDS_FILE)
    if not isinstance(doc_ids, list) or len(doc_ids) != index.ntotal:
        count = len(doc_ids) if isinstance(doc_ids, list) else "no list of"
        raise InputError(f"{root}: {count} doc ids for an index of {index.ntotal} vectors; rebuild it")
    if wants_gpu(settings):
        index = to_gpu(index)
    set_search_parameters(index, settings)
    return index, doc_ids


def load_metadata(directory: str | Path) -> dict:
    metadata = read_json(_saved_index(directory, METADATA_FILE) / METADATA_FILE)
    if not isinstance(metadata, dict):
        raise InputError(f"{Path(directory) / METADATA_FILE}: expected a JSON object")
    return metadata


def _saved_index(directory: str | Path, *names: str) -> Path:
    """`directory`, which must hold the files `names` of a saved index; else an `InputError` naming them."""
    root = Path(directory)
    if not root.is_dir():
        raise InputError(f"{root}: no such dense index (build one with `posbias dense-index`)")
    missing = [name for name in names if not (root / name).is_file()]
    if missing:
        raise InputError(f"{root} is not a saved FAISS index: {', '.join(missing)} missing")
    return root


def _as_float32_rows(vectors: np.ndarray) -> np.ndarray:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise ValueError(f"expected a 2-D array of vectors, got shape {vectors.shape}")
    return vectors
