"""FAISS k-NN indexes over unit vectors with the inner-product metric (= cosine).

Kinds: `flat` (exact), `ivf` (inverted lists: `nlist` clusters trained on the
vectors, `nprobe` searched per query) and `hnsw` (graph: `m` links per node,
`ef_construction`, `ef_search`). An index lives in a directory: `index.faiss`,
`doc_ids.json` (the document id of each row), `settings.json` (so that
search-time parameters such as nprobe survive a reload) and `metadata.json`
(whatever the caller records, e.g. the encoder that made the vectors). Saved indexes are
always CPU indexes; `use_gpu` decides where they are built and searched.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import faiss
import numpy as np
from tqdm import tqdm

from posbias.settings import from_section

KINDS = ("flat", "ivf", "hnsw")
INDEX_FILE, DOC_IDS_FILE, SETTINGS_FILE, METADATA_FILE = "index.faiss", "doc_ids.json", "settings.json", "metadata.json"
ADD_BLOCK = 16384  # vectors added per step, for a progress bar on large builds

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
            raise ValueError(f"faiss settings: index must be one of {KINDS}, got {self.index!r}")
        if self.use_gpu not in ("auto", True, False):
            raise ValueError(f"faiss settings: use_gpu must be 'auto', true or false, got {self.use_gpu!r}")
        if self.index == "ivf" and self.nlist is None:
            raise ValueError("faiss settings: index 'ivf' needs 'nlist' (number of clusters)")
        for key in ("nlist", "nprobe", "m", "ef_construction", "ef_search"):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"faiss settings: {key} must be a positive integer, got {value!r}")

    @classmethod
    def from_config(cls, section: Mapping) -> "FaissSettings":
        return from_section(cls, section, "faiss settings")


def gpu_available() -> bool:
    return hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0


def wants_gpu(settings: FaissSettings) -> bool:
    """True when the index should live on a GPU; use_gpu=true without a GPU build or GPU is an error."""
    if settings.use_gpu is True and not gpu_available():
        raise RuntimeError("faiss settings: use_gpu is true, but FAISS has no GPU support here "
                           "(install faiss-gpu and check that a GPU is visible)")
    if settings.use_gpu is True and settings.index == "hnsw":
        raise ValueError("faiss settings: use_gpu is true, but FAISS has no GPU HNSW index; use flat or ivf")
    # FAISS has no GPU HNSW, so 'auto' keeps HNSW on the CPU.
    return settings.use_gpu is True or (settings.use_gpu == "auto" and settings.index != "hnsw" and gpu_available())


def build(vectors: np.ndarray, settings: FaissSettings, progress: bool = True) -> faiss.Index:
    """An index over `vectors` (rows = documents), trained on them where the kind needs training."""
    vectors = _as_float32_rows(vectors)
    index = _empty_index(vectors.shape[1], settings)
    if wants_gpu(settings):
        index = to_gpu(index)
    if settings.index == "ivf":
        check_trainable(len(vectors), settings)
        index.train(vectors)
    for start in tqdm(range(0, len(vectors), ADD_BLOCK), desc="FAISS add", unit="block",
                      disable=not progress, mininterval=5):
        index.add(vectors[start:start + ADD_BLOCK])
    set_search_parameters(index, settings)
    return index


def check_trainable(n_vectors: int, settings: FaissSettings) -> None:
    """IVF k-means needs at least one vector per cluster; say so before anything expensive runs."""
    if settings.index == "ivf" and n_vectors < settings.nlist:
        raise ValueError(f"faiss settings: nlist={settings.nlist} clusters need at least as many vectors "
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
    made) into a staging directory, then rename it into place."""
    if len(doc_ids) != index.ntotal:
        raise ValueError(f"{len(doc_ids)} doc ids for an index of {index.ntotal} vectors")
    target = Path(directory)
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    faiss.write_index(to_cpu(index), str(staging / INDEX_FILE))
    (staging / DOC_IDS_FILE).write_text(json.dumps(list(doc_ids)), encoding="utf-8")
    (staging / SETTINGS_FILE).write_text(json.dumps(dataclasses.asdict(settings)), encoding="utf-8")
    (staging / METADATA_FILE).write_text(json.dumps(dict(metadata or {})), encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)


def load(directory: str | Path) -> tuple[faiss.Index, list[str]]:
    """The saved index (moved to the GPU if its settings ask for it) and the doc id of each row."""
    root = Path(directory)
    for name in (INDEX_FILE, DOC_IDS_FILE, SETTINGS_FILE):
        if not (root / name).is_file():
            raise FileNotFoundError(f"{root / name} is missing: {root} is not a saved FAISS index")
    settings = FaissSettings.from_config(json.loads((root / SETTINGS_FILE).read_text(encoding="utf-8")))
    index = faiss.read_index(str(root / INDEX_FILE))
    doc_ids = json.loads((root / DOC_IDS_FILE).read_text(encoding="utf-8"))
    if len(doc_ids) != index.ntotal:
        raise ValueError(f"{root}: {len(doc_ids)} doc ids for an index of {index.ntotal} vectors")
    if wants_gpu(settings):
        index = to_gpu(index)
    set_search_parameters(index, settings)
    return index, doc_ids


def load_metadata(directory: str | Path) -> dict:
    path = Path(directory) / METADATA_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: {directory} is not a saved FAISS index")
    return json.loads(path.read_text(encoding="utf-8"))


def _as_float32_rows(vectors: np.ndarray) -> np.ndarray:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise ValueError(f"expected a 2-D array of vectors, got shape {vectors.shape}")
    return vectors
