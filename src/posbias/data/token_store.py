"""Token ids of a collection, tokenised once and read lazily by document id.

Training and reranking read the same collection many times (every model, seed and fold), and at
paper scale (MS MARCO: 3.2M documents of up to 1431 tokens) its token ids as Python lists would
not fit in memory. A store is a directory written once per (collection, tokenizer, cap):

  tokens.bin    int32 token ids of every document, concatenated in collection order, at most `cap` each
  keys.npy      the document ids, sorted (fixed-width UTF-8 bytes), for binary search
  starts.npy    int64 [n]: where the ids of the document with key i start in tokens.bin (in ids)
  counts.npy    int32 [n]: how many ids it has there (its length, capped)
  lengths.npy   int32 [n]: its full token count, before the cap
  meta.json     tokenizer, cap, counts and a fingerprint of the vocabulary

A document's number in a store is its position in doc-id order (`keys`), so sorting numbers sorts
documents by id, whatever the order of the collection file.

Tokens are counted without special tokens (a ranker adds its own [CLS]/[SEP]). Reading holds the
small index arrays memory-mapped and reads a document's ids from the file when asked, so a job's
memory grows with its batch, not with the collection or its candidates.

Models whose tokenizers give the same ids share the disk of one store: a new store whose id files are byte for
byte those of a finished store of the same collection (a sibling directory: ELECTRA, E5 and MOSAIC read BERT's
WordPiece ids under other names) becomes hard links to that store's files, and its meta.json says so and how many
bytes were not stored twice. The ids themselves are compared, not tokenizer names or vocabularies, so a tokenizer
that differs anywhere (a vocabulary, lower-casing, accents) keeps a store of its own.
"""

from __future__ import annotations

import contextlib
import filecmp
import hashlib
import json
import logging
import os
from array import array
from pathlib import Path
from typing import Sequence

import numpy as np
from tqdm import tqdm

from posbias.backbones import load_tokenizer
from posbias.errors import InputError
from posbias.io import atomic_directory, atomic_write, batched, iter_documents, read_json

log = logging.getLogger(__name__)

FORMAT = 1
TOKENS, KEYS, STARTS, COUNTS, LENGTHS, META = ("tokens.bin", "keys.npy", "starts.npy", "counts.npy", "lengths.npy",
                                              "meta.json")
FILES = (TOKENS, KEYS, STARTS, COUNTS, LENGTHS, META)
ID_FILES = (TOKENS, KEYS, STARTS, COUNTS, LENGTHS)  # what two stores of the same ids share
ID_BYTES = np.dtype(np.int32).itemsize


def vocabulary_fingerprint(tokenizer) -> str:
    """A hash of the tokenizer's vocabulary: a store may only be read with a tokenizer that made the same ids."""
    items = sorted(tokenizer.get_vocab().items())
    return hashlib.sha256(json.dumps(items, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def encode_documents(tokenizer, texts: list[str]) -> list[list[int]]:
    """Token ids of document texts as a store holds them: no special tokens, not truncated."""
    if not texts:  # the tokenizer fails on an empty batch
        return []
    # Only input_ids: attention masks and type ids would triple the Python objects built per token.
    # verbose=False: texts longer than the model's maximum are expected here, the cap cuts them.
    return tokenizer(texts, add_special_tokens=False, return_attention_mask=False, return_token_type_ids=False,
                     verbose=False)["input_ids"]


def build_token_store(docs: str | os.PathLike, out_dir: str | os.PathLike, tokenizer_name: str, cap: int | None,
                      trust_remote_code: bool = False, batch_size: int = 1000, progress: bool = True) -> dict:
    """Tokenise a JSONL document file (title joined to text, as rankers read it) into a store at `out_dir`.

    `cap` keeps at most that many ids per document (None keeps all); lengths are recorded before the cap.
    Returns the store's metadata.
    """
    if cap is not None and cap < 1:
        raise InputError(f"token store cap must be positive, got {cap}")
    tokenizer = load_tokenizer(tokenizer_name, trust_remote_code)
    doc_ids: list[str] = []
    lengths = array("i")  # compact: 4 and 8 bytes per document, not a Python int each
    offsets = array("q", [0])
    with atomic_directory(out_dir) as staging:
        with open(staging / TOKENS, "wb") as out:
            documents = tqdm(iter_documents(docs), desc="tokenising", unit="doc", mininterval=10, disable=not progress)
            for block in batched(documents, batch_size):
                for (doc_id, _), ids in zip(block, encode_documents(tokenizer, [text for _, text in block])):
                    kept = np.asarray(ids[:cap] if cap else ids, dtype=np.int32)
                    out.write(kept.tobytes())
                    doc_ids.append(doc_id)
                    lengths.append(len(ids))
                    offsets.append(offsets[-1] + len(kept))
        if not doc_ids:
            raise InputError(f"{docs}: no documents to tokenise: the file is empty")
        keys = np.array([doc_id.encode("utf-8") for doc_id in doc_ids])
        del doc_ids
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        duplicates = np.flatnonzero(keys[1:] == keys[:-1])
        if len(duplicates):
            raise InputError(f"{docs}: document {keys[duplicates[0]].decode()!r} appears twice")
        offsets = np.frombuffer(offsets, dtype=np.int64)
        _save_array(staging / KEYS, keys)
        _save_array(staging / STARTS, offsets[:-1][order])
        _save_array(staging / COUNTS, np.diff(offsets).astype(np.int32)[order])
        _save_array(staging / LENGTHS, np.frombuffer(lengths, dtype=np.int32)[order])
        meta = {"format": FORMAT, "tokenizer": tokenizer_name, "vocabulary": vocabulary_fingerprint(tokenizer),
                "cap": cap, "documents": len(keys), "stored_tokens": int(offsets[-1]),
                "full_tokens": int(np.frombuffer(lengths, dtype=np.int32).sum(dtype=np.int64)), "source": str(docs)}
        (staging / META).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    # After the store is in place, so that of two jobs writing stores of the same ids at once the second to finish
    # finds the first's (the files it replaces hold the same bytes, so a reader sees no change)
    sharing = share_identical_ids(Path(out_dir))
    if sharing:
        meta.update(sharing)
        with atomic_write(Path(out_dir) / META) as out:
            out.write(json.dumps(meta, indent=2) + "\n")
    log.info("tokenised %d documents of %s with %s (cap %s): %d ids stored", meta["documents"], docs,
             tokenizer_name, cap, meta["stored_tokens"])
    return meta


def share_identical_ids(store: Path) -> dict:
    """Hard-link the id files of a finished `store` to those of a finished sibling store holding the same bytes,
    so the disk holds them once. Returns what meta.json records of it: the sibling and the bytes not stored again,
    or nothing when no sibling matches (or the file system refuses hard links, and the copy stays)."""
    sizes = {name: (store / name).stat().st_size for name in ID_FILES}
    siblings = sorted(p for p in store.parent.iterdir() if p.is_dir() and not p.name.startswith(".")
                      and p.name != store.name)
    for sibling in siblings:
        if not all((sibling / name).is_file() for name in FILES):
            continue
        if any((sibling / name).stat().st_size != size for name, size in sizes.items()):
            continue  # the cheap test first: stores of other ids almost always differ in size
        if not all(filecmp.cmp(sibling / name, store / name, shallow=False) for name in ID_FILES):
            continue
        try:
            for name in ID_FILES:
                link = store / f".{name}.link"
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(link)  # left by a job killed here
                os.link(sibling / name, link)
                os.replace(link, store / name)
        except OSError as err:  # a file system without hard links (or at its limit): keep the copy
            log.warning("%s holds the same ids as %s but cannot share its files (%s); keeping a copy", store,
                        sibling, err.strerror)
            return {}
        shared = sum(sizes.values())
        log.info("%s holds the same ids as %s: its files are shared, %.1f MB not stored again", store, sibling,
                 shared / 1e6)
        return {"shares_ids_with": sibling.name, "bytes_not_stored_again": shared}
    return {}


def _save_array(path: Path, array: np.ndarray) -> None:
    """The bytes of `np.save(path, array)`, written by Python: numpy's own writer (fwrite) reports a full disk as
    "N requested and M written", without the errno that makes it a `DiskFullError`."""
    with open(path, "wb") as out:
        np.lib.format.write_array_header_1_0(out, np.lib.format.header_data_from_array_1_0(array))
        out.write(np.ascontiguousarray(array).data)


class TokenStore:
    """Read access to a token store: document numbers by id, then each document's ids and lengths."""

    _fd: int | None = None  # set last in __init__; close() must work on a half-built instance

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise InputError(f"{directory}: no such token store (build one with `posbias tokenize`)")
        missing = [name for name in FILES if not (self.directory / name).is_file()]
        if missing:
            raise InputError(f"{directory} is not a token store: {', '.join(missing)} missing "
                             f"(build one with `posbias tokenize`)")
        self.meta = read_json(self.directory / META)
        if not isinstance(self.meta, dict) or self.meta.get("format") != FORMAT:
            found = self.meta.get("format") if isinstance(self.meta, dict) else None
            raise InputError(f"{directory}: token store format {found} is not {FORMAT}; rebuild it")
        # Memory-mapped: a lookup touches a few pages, never the whole index.
        self.keys = np.load(self.directory / KEYS, mmap_mode="r")
        self.starts = np.load(self.directory / STARTS, mmap_mode="r")
        self.counts = np.load(self.directory / COUNTS, mmap_mode="r")
        self.lengths = np.load(self.directory / LENGTHS, mmap_mode="r")
        # Ids are read with pread, so they are not kept resident as pages of a mapping would be.
        self._fd = os.open(self.directory / TOKENS, os.O_RDONLY)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "TokenStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        self.close()

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def cap(self) -> int | None:
        return self.meta["cap"]

    def check_tokenizer(self, tokenizer, max_doc_tokens: int | None = None) -> None:
        """Refuse a tokenizer with another vocabulary, and a document budget beyond the store's cap."""
        fingerprint = vocabulary_fingerprint(tokenizer)
        if fingerprint != self.meta["vocabulary"]:
            raise InputError(f"{self.directory} was tokenised with {self.meta['tokenizer']!r}, whose vocabulary "
                             f"differs from this ranker's tokenizer; build a store with the ranker's backbone")
        if max_doc_tokens is not None and self.cap is not None and max_doc_tokens > self.cap:
            raise InputError(f"{self.directory} keeps {self.cap} tokens per document, but the ranker reads "
                             f"{max_doc_tokens}; rebuild the store with a larger cap")

    def find(self, doc_ids: Sequence[str]) -> np.ndarray:
        """The number of each document id (its position in doc-id order), -1 where the store lacks it."""
        found = np.full(len(doc_ids), -1, dtype=np.int64)
        if not len(doc_ids):
            return found
        encoded = [doc_id.encode("utf-8") for doc_id in doc_ids]
        width = self.keys.dtype.itemsize
        fits = np.fromiter((len(key) <= width for key in encoded), dtype=bool, count=len(encoded))
        probe = np.array([key for key, ok in zip(encoded, fits) if ok], dtype=self.keys.dtype)
        slots = np.searchsorted(self.keys, probe)
        inside = slots < len(self.keys)
        hit = np.zeros(len(probe), dtype=bool)
        hit[inside] = self.keys[slots[inside]] == probe[inside]
        found[np.flatnonzero(fits)[hit]] = slots[hit]
        return found

    def numbers(self, doc_ids: Sequence[str], what: str = "documents") -> np.ndarray:
        """The numbers of `doc_ids`; an id not in the store is an error naming it (`what` says whose ids)."""
        numbers = self.find(doc_ids)
        missing = [doc_ids[i] for i in np.flatnonzero(numbers < 0)[:3]]
        if missing:
            raise InputError(f"{int((numbers < 0).sum())} {what} are not in the token store {self.directory} "
                             f"(made from {self.meta['source']}), e.g. {missing}")
        return numbers

    def doc_id(self, number: int) -> str:
        return bytes(self.keys[number]).decode("utf-8")

    def ids(self, number: int, limit: int | None = None) -> np.ndarray:
        """The first `limit` (default all stored) token ids of a document, as int32."""
        count = int(self.counts[number]) if limit is None else min(int(self.counts[number]), limit)
        if count <= 0:
            return np.empty(0, dtype=np.int32)
        data = os.pread(self._fd, count * ID_BYTES, int(self.starts[number]) * ID_BYTES)
        if len(data) != count * ID_BYTES:  # a truncated file (or a network file system's short read)
            raise OSError(f"{self.directory / TOKENS}: read {len(data)} of {count * ID_BYTES} bytes of document "
                          f"{self.doc_id(number)!r}; the store is damaged, rebuild it")
        return np.frombuffer(data, dtype=np.int32)
