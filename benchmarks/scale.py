"""Paper scale with bounded memory: peak RSS and time of preparing training and reranking from a token
store (new) against tokenising every candidate document up front into Python lists (old), and of
building a flat FAISS index block by block (new) against concatenating all blocks first (old).

The collection is synthetic, with an MS MARCO-like length distribution: token counts drawn (seeded)
from a lognormal whose median is the 1431-token cap the rankers read (so about half the documents
hit the cap; lengths are capped there), text made of words that are single tokens of the offline
MiniLM tokenizer (bert-base-uncased WordPiece: alphabetic whole-word vocabulary entries), so every
document has exactly its drawn token count. The query sets and candidate runs do not grow with the
collection (training: 50,000 queries with one judged positive each and a top-100 run, the positive
among the candidates for 80% of them; reranking: 5,000 queries x 100), so a path whose memory is
bounded by its batch, not by the collection, shows the same peak at every size. Candidates are drawn
uniformly from the collection, so at these sizes (5M training pairs) nearly every document is a
training candidate: the old path has to tokenise almost the whole collection.

Measured per collection size, each in a fresh child process (this script with a hidden `--measure`),
its peak RSS (the process and its children, polled every 0.2 s, and the child's own high-water mark)
and wall time (after imports and the tokenizer load, which both paths share):

  store   `build_token_store(docs, out, "offline:all-MiniLM-L6-v2", cap=1431)`: time, size on disk, peak RSS.
  train   prepare training for the training queries x top 100, up to the first forward pass.
          new: what `posbias.training.steps.fit` and `train` do: open the store, `candidate_numbers`
          over the streamed run, `PairSampler`, one epoch of triples, then the first 200 batches of
          16 pairs (32 sequences) from `store.ids` with `Chunker.batch` (MaxP geometry: query 32,
          chunks of 477 every 477, 1431 document tokens).
          old: the previous code (git HEAD before the token store): `read_run`, `read_documents(keep=
          judged + candidates)`, its `PairSampler` over doc ids, all needed documents tokenised in one
          call into Python lists (`tokenizer(texts, add_special_tokens=False, truncation=True,
          max_length=1431)["input_ids"]`), all queries tokenised, then the same 200 batches.
  rerank  reranking preparation for the rerank queries x 100, up to the first forward pass.
          new: what `rerank` does: `read_run`, `store.numbers` of every pair, the length sort, then
          the first 200 batches of 32 pairs (the shortest documents: the sort puts them first).
          old: `read_run`, `read_documents(keep=candidates)`, every candidate tokenised in one call as
          above, the old length sort, the same 200 batches.
  faiss   a flat FAISS index over the collection's vectors (random float32 unit vectors, dimension 768
          as BERT-base; made 50,000 per block, as `build_dense_index` encodes them).
          new: `faiss_index.IncrementalBuilder(768, flat, n_expected=N)`, each block added as it is made.
          old: all blocks held, `np.concatenate`d, then the previous `faiss_index.build` (an empty
          IndexFlatIP grown by `add` in steps of 16,384 vectors; no reserved storage).

A child that passes `--ram-limit-gb` (default 12) is killed and reported as "> 12 GB (killed at N s)",
a valid result: it says where the old path no longer fits. A child is also killed, and reported so,
if the machine's available memory falls below `--min-available-gb` (others work on it too).
GB here are 2^30 bytes. Ratios are new/old of the same size, measured in the same run.

Generated files are cached in `--workdir` (default /tmp/posbias-scale) keyed by size, seed and query
counts; a token store built there is reused (its recorded build measurement with it) unless
`--fresh-store`. Timings are wall times on a shared machine: other jobs' load shows in them.

    .venv/bin/python benchmarks/scale.py [--sizes 300000 600000] [--json OUT] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

GB = 2 ** 30
TOKENIZER = "offline:all-MiniLM-L6-v2"
CAP = 1431  # MS MARCO documents as the rankers read them: at most 1431 BERT tokens
GEOMETRY = {"max_query_tokens": 32, "chunk_tokens": 477, "stride": 477, "max_doc_tokens": CAP}  # MaxP
TRAIN_BATCH_PAIRS = 16  # pairs per training batch: 32 sequences
RERANK_BATCH = 32  # pairs per rerank batch
DIM = 768  # BERT-base
VECTOR_BLOCK = 50_000  # build_dense_index's block size
OLD_ADD_BLOCK = 16_384  # the previous faiss_index.build added this many vectors per call
POSITIVE_AMONG_CANDIDATES = 0.8
MIN_DOC_TOKENS = 8
STEPS = ("store", "train", "rerank", "faiss")
STEP_NAMES = {"store": "token store build", "train": "prepare training ({queries:,} q x top {depth})",
              "rerank": "rerank preparation ({queries:,} q x {depth})", "faiss": "FAISS flat index build"}
QUICK = {"sizes": [20_000, 40_000], "train_queries": 2_000, "rerank_queries": 500}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", help="collection sizes (default 300000 600000)")
    parser.add_argument("--train-queries", type=int, help="training queries, one positive each (default 50000)")
    parser.add_argument("--rerank-queries", type=int, help="queries of the rerank run (default 5000)")
    parser.add_argument("--depth", type=int, default=100, help="candidates per query in both runs")
    parser.add_argument("--batches", type=int, default=200, help="batches assembled after preparing")
    parser.add_argument("--sigma", type=float, default=1.0,
                        help="lognormal sigma of document lengths (the median is the cap)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS), help="what to measure")
    parser.add_argument("--paths", nargs="+", choices=("new", "old"), default=["new", "old"])
    parser.add_argument("--ram-limit-gb", type=float, default=12.0, help="kill a measurement above this RSS")
    parser.add_argument("--min-available-gb", type=float, default=1.5,
                        help="kill a measurement when the machine's available memory falls below this")
    parser.add_argument("--workdir", default="/tmp/posbias-scale", help="generated files, cached by size")
    parser.add_argument("--skip-old-after-kill", action="store_true",
                        help="do not rerun an old path at a larger size once it was killed above the limit at a "
                             "smaller one (its memory only grows with the collection); reported as not rerun")
    parser.add_argument("--fresh-store", action="store_true", help="rebuild (and re-measure) cached token stores")
    parser.add_argument("--json", help="also write the numbers to this JSON file")
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke test: sizes {QUICK['sizes']}, {QUICK['train_queries']:,} training and "
                             f"{QUICK['rerank_queries']:,} rerank queries (explicit options win)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # child mode: a JSON measurement spec
    parser.add_argument("--result", help=argparse.SUPPRESS)  # child mode: where to write its result
    args = parser.parse_args(argv)
    defaults = QUICK if args.quick else {"sizes": [300_000, 600_000], "train_queries": 50_000,
                                         "rerank_queries": 5_000}
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


# --- synthetic data --------------------------------------------------------------------------------

def single_token_words(tokenizer) -> np.ndarray:
    """Alphabetic whole-word vocabulary entries (no '##' pieces, no [unused]), checked to be one token each."""
    vocab = tokenizer.get_vocab()
    words = sorted(w for w in vocab if re.fullmatch(r"[a-z]{2,}", w))
    encoded = tokenizer([" ".join(words[i:i + 1000]) for i in range(0, len(words), 1000)],
                        add_special_tokens=False, return_attention_mask=False, return_token_type_ids=False,
                        verbose=False)["input_ids"]
    if [i for ids in encoded for i in ids] != [vocab[w] for w in words]:
        raise RuntimeError("some alphabetic vocabulary entries do not tokenise to themselves")
    return np.array(words, dtype=object)


def document_lengths(n: int, sigma: float, seed: int) -> np.ndarray:
    """Token counts: lognormal with its median at the cap (so about half reach it), capped there."""
    rng = np.random.default_rng([seed, n, 1])
    drawn = rng.lognormal(mean=np.log(CAP), sigma=sigma, size=n)
    return np.clip(np.rint(drawn), MIN_DOC_TOKENS, CAP).astype(np.int64)


def generate_collection(path: Path, n: int, sigma: float, seed: int, words: np.ndarray) -> dict:
    from tqdm import tqdm

    from posbias.io import write_documents

    lengths = document_lengths(n, sigma, seed)
    rng = np.random.default_rng([seed, n, 2])
    bar = tqdm(total=int(lengths.sum()), desc=f"generating {n:,} documents", unit="token", unit_scale=True,
               mininterval=2)

    def documents():
        for start in range(0, n, 1000):
            block = lengths[start:start + 1000]
            ids = rng.integers(len(words), size=int(block.sum()))
            bounds = np.concatenate([[0], np.cumsum(block)])
            for i, length in enumerate(block):
                yield {"id": f"D{start + i}", "text": " ".join(words[ids[bounds[i]:bounds[i + 1]]])}
            bar.update(int(block.sum()))

    write_documents(path, documents())
    bar.close()
    return {"documents": n, "tokens": int(lengths.sum()), "mean_tokens": float(lengths.mean()),
            "median_tokens": float(np.median(lengths)), "capped_fraction": float((lengths == CAP).mean()),
            "jsonl_bytes": path.stat().st_size, "sigma": sigma}


def queries_text(prefix: str, count: int, words: np.ndarray, rng: np.random.Generator) -> dict[str, str]:
    return {f"{prefix}{i}": " ".join(words[rng.integers(len(words), size=rng.integers(2, 7))]) for i in range(count)}


def candidate_rows(n_queries: int, depth: int, n_docs: int, rng: np.random.Generator) -> np.ndarray:
    """Per query `depth` distinct documents, uniform over the collection."""
    rows = rng.integers(n_docs, size=(n_queries, depth))
    ordered = np.sort(rows, axis=1)
    for q in np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1)):
        rows[q] = rng.choice(n_docs, size=depth, replace=False)
    return rows


def write_trec_run(path: Path, qids: list[str], rows: np.ndarray) -> None:
    from posbias.io import atomic_write

    depth = rows.shape[1]
    with atomic_write(path) as out:
        for qid, row in zip(qids, rows):
            out.write("".join(f"{qid} Q0 D{d} {rank} {depth - rank + 1}.0 scale\n"
                              for rank, d in enumerate(row.tolist(), start=1)))


def generate_queries(directory: Path, n_docs: int, args: argparse.Namespace, words: np.ndarray) -> dict:
    from posbias.io import write_qrels, write_queries

    rng = np.random.default_rng([args.seed, n_docs, 3])
    train = queries_text("T", args.train_queries, words, rng)
    qids = list(train)
    positives = rng.integers(n_docs, size=len(qids))
    rows = candidate_rows(len(qids), args.depth, n_docs, rng)
    among = 0
    for q, positive in enumerate(positives):
        if rng.random() < POSITIVE_AMONG_CANDIDATES:
            if positive not in rows[q]:
                rows[q, rng.integers(args.depth)] = positive
            among += 1
    write_queries(directory / "train_queries.tsv", train)
    write_qrels(directory / "train_qrels.txt", {q: {f"D{p}": 1} for q, p in zip(qids, positives.tolist())})
    write_trec_run(directory / "train_run.txt", qids, rows)
    rerank = queries_text("R", args.rerank_queries, words, rng)
    rerank_rows = candidate_rows(len(rerank), args.depth, n_docs, rng)
    write_queries(directory / "rerank_queries.tsv", rerank)
    write_trec_run(directory / "rerank_run.txt", list(rerank), rerank_rows)
    return {"train_queries": len(train), "train_pairs": int(rows.size), "positive_among_candidates": among,
            "train_candidate_documents": int(len(np.unique(np.concatenate([rows.ravel(), positives])))),
            "rerank_queries": len(rerank), "rerank_pairs": int(rerank_rows.size),
            "rerank_candidate_documents": int(len(np.unique(rerank_rows)))}


def prepare_data(n: int, args: argparse.Namespace, words_cache: list) -> dict:
    """The cached files of one collection size (generated on first use): their paths and statistics."""
    collection_dir = Path(args.workdir) / f"n{n}-sigma{args.sigma:g}-seed{args.seed}"
    queries_dir = collection_dir / f"q{args.train_queries}-r{args.rerank_queries}-k{args.depth}"
    files = {"docs": str(collection_dir / "docs.jsonl"), "tokens": str(collection_dir / "tokens"),
             "store_measurement": str(collection_dir / "store.json"),
             **{name: str(queries_dir / file) for name, file in (
                 ("train_queries", "train_queries.tsv"), ("train_qrels", "train_qrels.txt"),
                 ("train_run", "train_run.txt"), ("rerank_queries", "rerank_queries.tsv"),
                 ("rerank_run", "rerank_run.txt"))}}

    def words():
        if not words_cache:
            from posbias.backbones import load_tokenizer
            words_cache.append(single_token_words(load_tokenizer(TOKENIZER)))
        return words_cache[0]

    collection_stats, queries_stats = collection_dir / "collection.json", queries_dir / "queries.json"
    if not collection_stats.is_file():
        collection_dir.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        stats = generate_collection(Path(files["docs"]), n, args.sigma, args.seed, words())
        stats["generate_s"] = time.perf_counter() - start
        collection_stats.write_text(json.dumps(stats, indent=2) + "\n")
        Path(files["store_measurement"]).unlink(missing_ok=True)  # a store of an older collection
    if not queries_stats.is_file():
        queries_dir.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        stats = generate_queries(queries_dir, n, args, words())
        stats["generate_s"] = time.perf_counter() - start
        queries_stats.write_text(json.dumps(stats, indent=2) + "\n")
    return {"files": files, "collection": json.loads(collection_stats.read_text()),
            "queries": json.loads(queries_stats.read_text())}


# --- measurements (child processes) ------------------------------------------------------------------

def own_peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def current_rss_bytes() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def measure_store(spec: dict) -> dict:
    from posbias.data.token_store import build_token_store

    start = time.perf_counter()
    meta = build_token_store(spec["docs"], spec["tokens"], TOKENIZER, cap=CAP, progress=True)  # bar: in the log
    seconds = time.perf_counter() - start
    disk = sum(f.stat().st_size for f in Path(spec["tokens"]).iterdir())
    return {"seconds": seconds, "details": {"disk_bytes": disk, "documents": meta["documents"],
                                            "stored_tokens": meta["stored_tokens"]}}


class OldPairSampler:
    """`posbias.training.sampler.PairSampler` before the token store (git HEAD): doc ids in Python lists."""

    def __init__(self, qrels, candidates, known_docs, min_grade: int = 1):
        self.positives, self.negatives = {}, {}
        for qid, judged in qrels.items():
            positives = sorted(d for d, grade in judged.items() if grade >= min_grade and d in known_docs)
            negatives = sorted(d for d in candidates.get(qid, {}) if judged.get(d, 0) < min_grade)
            if positives and negatives:
                self.positives[qid], self.negatives[qid] = positives, negatives

    @property
    def qids(self):
        return sorted(self.positives)

    def epoch(self, rng):
        qids = self.qids
        rng.shuffle(qids)
        return [(q, rng.choice(self.positives[q]), rng.choice(self.negatives[q])) for q in qids]


def old_tokenize_documents(tokenizer, texts: list[str]) -> list[list[int]]:
    """The old `Chunker.tokenize_documents`: one call for all texts, masks and type ids made and dropped."""
    return tokenizer(texts, add_special_tokens=False, truncation=True, max_length=CAP)["input_ids"]


def measure_train(spec: dict, tokenizer, chunker) -> dict:
    from posbias.io import iter_run, read_documents, read_qrels, read_queries, read_run

    start = time.perf_counter()
    texts = read_queries(spec["train_queries"])
    qrels = read_qrels(spec["train_qrels"])
    rng = random.Random(spec["seed"])
    shapes = []
    if spec["path"] == "new":
        from posbias.data.token_store import TokenStore
        from posbias.training.sampler import PairSampler, candidate_numbers

        store = TokenStore(spec["tokens"])
        store.check_tokenizer(tokenizer, CAP)
        pool = candidate_numbers(iter_run(spec["train_run"]), store, set(qrels), spec["train_run"])
        sampler = PairSampler(qrels, pool, store)
        triples = sampler.epoch(rng)
        prepared = time.perf_counter() - start
        for b in range(min(spec["batches"], -(-len(triples) // TRAIN_BATCH_PAIRS))):
            part = triples[b * TRAIN_BATCH_PAIRS:(b + 1) * TRAIN_BATCH_PAIRS]
            query_ids = chunker.tokenize_queries([texts[q] for q, _, _ in part])
            batch = chunker.batch([(query, store.ids(doc, CAP)) for query, (_, pos, neg) in zip(query_ids, part)
                                   for doc in (pos, neg)])
            shapes.append(tuple(batch.input_ids.shape))
        details = {"candidate_numbers": int(sum(len(v) for v in pool.values())), "queries": len(sampler.qids)}
    else:
        pool = read_run(spec["train_run"])
        needed = {d for judged in qrels.values() for d in judged} | {d for q in qrels for d in pool.get(q, {})}
        documents = read_documents(spec["docs"], keep=needed)
        sampler = OldPairSampler(qrels, pool, documents)
        needed = sorted({d for q in sampler.qids for d in (*sampler.positives[q], *sampler.negatives[q])})
        doc_ids = dict(zip(needed, old_tokenize_documents(tokenizer, [documents[d] for d in needed])))
        query_ids = dict(zip(sampler.qids, chunker.tokenize_queries([texts[q] for q in sampler.qids])))
        triples = sampler.epoch(rng)
        prepared = time.perf_counter() - start
        for b in range(min(spec["batches"], -(-len(triples) // TRAIN_BATCH_PAIRS))):
            part = triples[b * TRAIN_BATCH_PAIRS:(b + 1) * TRAIN_BATCH_PAIRS]
            batch = chunker.batch([(query_ids[q], doc_ids[d]) for q, pos, neg in part for d in (pos, neg)])
            shapes.append(tuple(batch.input_ids.shape))
        details = {"tokenised_documents": len(doc_ids), "queries": len(sampler.qids)}
    return {"seconds": time.perf_counter() - start,
            "details": {**details, "prepare_s": prepared, "batches": len(shapes), "largest_batch": max(shapes)}}


def measure_rerank(spec: dict, tokenizer, chunker) -> dict:
    from posbias.io import read_documents, read_queries, read_run

    start = time.perf_counter()
    queries = read_queries(spec["rerank_queries"])
    candidates = read_run(spec["rerank_run"])
    qids = sorted(candidates)
    shapes = []
    if spec["path"] == "new":
        from posbias.data.token_store import TokenStore

        store = TokenStore(spec["tokens"])
        store.check_tokenizer(tokenizer, CAP)
        query_ids = dict(zip(qids, chunker.tokenize_queries([queries[q] for q in qids])))
        pair_queries = [q for q in qids for _ in candidates[q]]
        pair_docs = [d for q in qids for d in candidates[q]]
        numbers = store.numbers(pair_docs, what="candidate documents")
        lengths = np.minimum(store.counts[numbers], CAP)
        order = sorted(range(len(pair_docs)), key=lambda i: (lengths[i], pair_queries[i], pair_docs[i]))
        prepared = time.perf_counter() - start
        for b in range(min(spec["batches"], -(-len(order) // RERANK_BATCH))):
            part = order[b * RERANK_BATCH:(b + 1) * RERANK_BATCH]
            batch = chunker.batch([(query_ids[pair_queries[i]], store.ids(numbers[i], CAP)) for i in part])
            shapes.append(tuple(batch.input_ids.shape))
        details = {"pairs": len(order)}
    else:
        needed = {d for scores in candidates.values() for d in scores}
        documents = read_documents(spec["docs"], keep=needed)
        doc_set = sorted({d for scored in candidates.values() for d in scored})
        doc_ids = dict(zip(doc_set, old_tokenize_documents(tokenizer, [documents[d] for d in doc_set])))
        query_ids = dict(zip(qids, chunker.tokenize_queries([queries[q] for q in qids])))
        pairs = sorted(((q, d) for q in qids for d in candidates[q]), key=lambda qd: (len(doc_ids[qd[1]]), qd))
        prepared = time.perf_counter() - start
        for b in range(min(spec["batches"], -(-len(pairs) // RERANK_BATCH))):
            part = pairs[b * RERANK_BATCH:(b + 1) * RERANK_BATCH]
            batch = chunker.batch([(query_ids[q], doc_ids[d]) for q, d in part])
            shapes.append(tuple(batch.input_ids.shape))
        details = {"pairs": len(pairs), "tokenised_documents": len(doc_ids)}
    return {"seconds": time.perf_counter() - start,
            "details": {**details, "prepare_s": prepared, "batches": len(shapes), "largest_batch": max(shapes)}}


def vector_blocks(n: int, seed: int):
    """Random unit vectors, `VECTOR_BLOCK` at a time (a stand-in for encoded documents), normalised in place
    (np.linalg.norm would make two temporary copies of a block)."""
    rng = np.random.default_rng([seed, n, 4])
    for start in range(0, n, VECTOR_BLOCK):
        block = rng.standard_normal((min(VECTOR_BLOCK, n - start), DIM), dtype=np.float32)
        block /= np.sqrt(np.einsum("ij,ij->i", block, block))[:, None]
        yield block


def measure_faiss(spec: dict) -> dict:
    import faiss

    from posbias.retrieval import faiss_index
    from posbias.retrieval.faiss_index import FaissSettings

    n = spec["n"]
    start = time.perf_counter()
    if spec["path"] == "new":
        builder = faiss_index.IncrementalBuilder(DIM, FaissSettings(index="flat", use_gpu=False), n_expected=n)
        for block in vector_blocks(n, spec["seed"]):
            builder.add(block)
            del block  # as build_dense_index holds no block while the next one is made
        index = builder.finish()
    else:  # the previous build_dense_index + faiss_index.build
        blocks = list(vector_blocks(n, spec["seed"]))
        vectors = np.concatenate(blocks)
        index = faiss.IndexFlatIP(DIM)
        for begin in range(0, len(vectors), OLD_ADD_BLOCK):
            index.add(vectors[begin:begin + OLD_ADD_BLOCK])
    if index.ntotal != n:
        raise RuntimeError(f"index holds {index.ntotal} vectors, expected {n}")
    return {"seconds": time.perf_counter() - start,
            "details": {"vectors_bytes": n * DIM * 4, "omp_threads": faiss.omp_get_max_threads()}}


def child_main(args: argparse.Namespace) -> None:
    spec = json.loads(args.measure)
    tokenizer = chunker = None
    if spec["step"] in ("train", "rerank"):  # shared by both paths: loaded before the clock starts
        from posbias.backbones import load_tokenizer
        from posbias.rankers.chunking import ChunkGeometry, Chunker

        tokenizer = load_tokenizer(TOKENIZER)
        chunker = Chunker(tokenizer, ChunkGeometry(**GEOMETRY))
    elif spec["step"] == "faiss":
        import faiss  # noqa: F401
    baseline = current_rss_bytes()
    if spec["step"] == "store":
        result = measure_store(spec)
    elif spec["step"] == "train":
        result = measure_train(spec, tokenizer, chunker)
    elif spec["step"] == "rerank":
        result = measure_rerank(spec, tokenizer, chunker)
    else:
        result = measure_faiss(spec)
    result.update(baseline_bytes=baseline, own_peak_bytes=own_peak_bytes())
    Path(args.result).write_text(json.dumps(result))


# --- the parent: runs each measurement in a watched child -------------------------------------------

def tree_rss(process) -> int:
    import psutil

    total = 0
    for member in [process, *process.children(recursive=True)]:
        try:
            total += member.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def kill_tree(process) -> None:
    import psutil

    try:
        members = [*process.children(recursive=True), process]
    except psutil.NoSuchProcess:
        return
    for member in members:
        try:
            member.kill()
        except psutil.NoSuchProcess:
            pass


def last_progress(log_path: Path) -> str:
    """The child's latest progress bar line (tqdm writes it to the log), shortened, for the parent's bar."""
    try:
        with open(log_path, "rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - 400))
            tail = log.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [part.strip() for part in re.split(r"[\r\n]", tail) if part.strip()]
    return f" | {lines[-1][:100]}" if lines else ""


def run_measurement(spec: dict, args: argparse.Namespace, label: str, log_path: Path) -> dict:
    """Run one measurement in a child process, polling its RSS; kill it above the limit."""
    import psutil
    from tqdm import tqdm

    limit, floor = args.ram_limit_gb * GB, args.min_available_gb * GB
    log_path.parent.mkdir(parents=True, exist_ok=True)
    result_path = log_path.with_suffix(".result.json")
    result_path.unlink(missing_ok=True)
    command = [sys.executable, str(Path(__file__).resolve()), "--measure", json.dumps(spec), "--result",
               str(result_path)]
    peak, killed, shown = 0, None, 0.0
    bar = tqdm(desc=label, bar_format="{desc}: {elapsed}, {postfix}")
    with open(log_path, "w") as log:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        process = psutil.Process(child.pid)
        while child.poll() is None:
            try:
                rss = tree_rss(process)
            except psutil.NoSuchProcess:
                break
            peak = max(peak, rss)
            if rss > limit:
                killed = "limit"
            elif psutil.virtual_memory().available < floor:
                killed = "machine"
            if killed:
                kill_tree(process)
                child.wait()
                break
            if time.perf_counter() - shown >= (1 if sys.stderr.isatty() else 30):
                bar.set_postfix_str(f"RSS {rss / GB:.2f} GB, peak {peak / GB:.2f} GB{last_progress(log_path)}")
                shown = time.perf_counter()
            time.sleep(0.2)
        elapsed = time.perf_counter() - start
    bar.close()
    if killed:
        return {"killed": killed, "killed_at_s": elapsed, "peak_bytes": peak, "polled_peak_bytes": peak}
    if child.returncode != 0 or not result_path.is_file():
        tail = log_path.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{label}: the measurement failed (exit {child.returncode}); log {log_path}:\n{tail}")
    result = json.loads(result_path.read_text())
    result.update(polled_peak_bytes=peak, peak_bytes=max(peak, result["own_peak_bytes"]), process_s=elapsed)
    return result


def measure_size(n: int, data: dict, args: argparse.Namespace, killed_old: dict[str, int]) -> list[dict]:
    """The measurements of one size; `killed_old` (step: smallest size where the old path was killed above
    the limit) is updated, and with `--skip-old-after-kill` such old paths are not run again at larger sizes."""
    files, rows = data["files"], []
    logs = Path(args.workdir) / "logs" / f"n{n}"
    base = {"n": n, "seed": args.seed, "batches": args.batches, **files}
    for step in args.steps:
        if step == "store":
            cached = Path(files["store_measurement"])
            if cached.is_file() and (Path(files["tokens"]) / "meta.json").is_file() and not args.fresh_store:
                result = {**json.loads(cached.read_text()), "cached": True}
            else:
                result = run_measurement({**base, "step": "store", "path": "new"}, args,
                                         f"n={n:,} store build", logs / "store.log")
                if "killed" not in result:
                    cached.write_text(json.dumps(result) + "\n")
            rows.append({"size": n, "step": "store", "path": "new", **result})
            if "killed" in result:
                raise RuntimeError(f"the token store build of {n:,} documents was killed: {result}")
            continue
        for path in ("new", "old"):
            if path not in args.paths:
                continue
            if path == "old" and args.skip_old_after_kill and step in killed_old:
                rows.append({"size": n, "step": step, "path": path, "killed": "smaller",
                             "killed_size": killed_old[step]})
                continue
            result = run_measurement({**base, "step": step, "path": path}, args, f"n={n:,} {step} {path}",
                                     logs / f"{step}-{path}.log")
            rows.append({"size": n, "step": step, "path": path, **result})
            if path == "old" and result.get("killed") == "limit":
                killed_old.setdefault(step, n)
    return rows


# --- report ------------------------------------------------------------------------------------------

def step_name(step: str, args: argparse.Namespace) -> str:
    queries = args.train_queries if step == "train" else args.rerank_queries
    return STEP_NAMES[step].format(queries=queries, depth=args.depth)


def rss_text(row: dict, limit_gb: float) -> str:
    if row.get("killed") == "limit":
        return f"> {limit_gb:g} GB (killed at {row['killed_at_s']:.0f} s)"
    if row.get("killed") == "smaller":
        return f"> {limit_gb:g} GB (not rerun: killed at size {row['killed_size']:,})"
    if row.get("killed") == "machine":
        return f"killed at {row['killed_at_s']:.0f} s, {row['peak_bytes'] / GB:.2f} GB: machine low on memory"
    return f"{row['peak_bytes'] / GB:.2f}"


def ratio_cells(new: dict, old: dict | None, limit_gb: float) -> tuple[str, str]:
    if old is None or "killed" in new:
        return "", ""
    if old.get("killed") in ("limit", "smaller"):
        return f"< {new['peak_bytes'] / GB / limit_gb:.2f}", "old killed"
    if "killed" in old:
        return "", ""
    return f"{new['peak_bytes'] / old['peak_bytes']:.2f}", f"{new['seconds'] / old['seconds']:.2f}"


def markdown(result: dict, args: argparse.Namespace) -> str:
    limit = args.ram_limit_gb
    rows = [r for r in result["rows"] if r["step"] != "store"]
    lines = ["| size | step | path | peak RSS (GB) | time (s) | RSS new/old | time new/old |",
             "| ---: | --- | --- | ---: | ---: | ---: | ---: |"]
    for row in rows:
        old = next((r for r in rows if r["size"] == row["size"] and r["step"] == row["step"] and r["path"] == "old"),
                   None)
        rss_ratio, time_ratio = ratio_cells(row, old, limit) if row["path"] == "new" else ("", "")
        seconds = "" if "killed" in row else f"{row['seconds']:.1f}"
        lines.append(f"| {row['size']:,} | {step_name(row['step'], args)} | {row['path']} | {rss_text(row, limit)} "
                     f"| {seconds} | {rss_ratio} | {time_ratio} |")
    stores = [r for r in result["rows"] if r["step"] == "store"]
    if stores:
        lines += ["", "| size | tokens (mean per doc, capped %) | JSONL (GB) | store build (s) | tokens/s "
                      "| store on disk (GB) | build peak RSS (GB) |",
                  "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for row in stores:
            c = result["data"][str(row["size"])]["collection"]
            cached = " (cached)" if row.get("cached") else ""
            lines.append(f"| {row['size']:,} | {c['tokens']:,} ({c['mean_tokens']:.0f}, "
                         f"{100 * c['capped_fraction']:.1f} %) | {c['jsonl_bytes'] / GB:.2f} | "
                         f"{row['seconds']:.0f}{cached} | {c['tokens'] / row['seconds']:,.0f} | "
                         f"{row['details']['disk_bytes'] / GB:.2f} | {row['peak_bytes'] / GB:.2f} |")
    lines.append("")
    for step in ("train", "rerank"):
        news = [r for r in rows if r["step"] == step and r["path"] == "new" and "killed" not in r]
        if len(news) >= 1:
            peaks = [r["peak_bytes"] / GB for r in news]
            spread = max(peaks) / min(peaks)
            verdict = "met" if max(peaks) < 4 and spread < 1.10 else "NOT met"
            lines.append(f"Goal for {step} (new peak RSS under 4 GB, flat across sizes): {verdict}; "
                         + ", ".join(f"{r['size']:,}: {r['peak_bytes'] / GB:.2f} GB" for r in news)
                         + f" (max/min {spread:.2f}).")
    queries = next(iter(result["data"].values()))["queries"]
    lines.append(f"Training: {queries['train_queries']:,} queries, {queries['train_pairs']:,} candidate pairs, "
                 f"positive among the candidates for {queries['positive_among_candidates']:,}; reranking: "
                 f"{queries['rerank_queries']:,} queries, {queries['rerank_pairs']:,} pairs; "
                 f"the first {args.batches} batches (fewer if an epoch has fewer pairs) assembled after preparing. "
                 f"RSS: the child process, polled every 0.2 s, and its own high-water mark; time: wall time after "
                 f"imports and the tokenizer load.")
    machine = result["machine"]
    lines.append(f"Machine: {machine['cpus']} CPUs, {machine['memory_gb']:.1f} GB RAM, load average "
                 f"{machine['load_average_at_start'][0]:.2f} at start, {machine['load_average_at_end'][0]:.2f} at end "
                 f"(other jobs share it: timings are noisy); total {result['total_s'] / 60:.1f} min.")
    return "\n".join(lines)


def git(*args: str) -> str:
    """The output of a read-only git command in this repository ('' where git is unavailable)."""
    try:
        return subprocess.run(["git", *args], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def main() -> None:
    args = parse_args()
    if args.measure:
        child_main(args)
        return
    import psutil

    started = time.perf_counter()
    machine = {"cpus": os.cpu_count(), "memory_gb": psutil.virtual_memory().total / GB,
               "load_average_at_start": os.getloadavg(), "python": platform.python_version()}
    code = {"commit": git("rev-parse", "HEAD"),  # the code measured: HEAD and what differs from it in src/
            "changed_files": git("status", "--porcelain", "--", "src").splitlines()}
    free = shutil.disk_usage(Path(args.workdir).parent if not Path(args.workdir).exists() else args.workdir).free
    print(f"workdir {args.workdir} ({free / GB:.0f} GB free), sizes {args.sizes}, "
          f"RSS limit {args.ram_limit_gb:g} GB", file=sys.stderr)
    words_cache: list = []
    data, rows, killed_old = {}, [], {}
    for n in sorted(args.sizes):
        data[str(n)] = prepare_data(n, args, words_cache)
        rows += measure_size(n, data[str(n)], args, killed_old)
    machine["load_average_at_end"] = os.getloadavg()
    result = {"machine": machine, "code": code, "args": {k: v for k, v in vars(args).items() if k not in ("measure", "result")},
              "tokenizer": TOKENIZER, "cap": CAP, "geometry": GEOMETRY, "dim": DIM, "data": data, "rows": rows,
              "total_s": time.perf_counter() - started}
    report = markdown(result, args)
    result["markdown"] = report
    if args.json:
        from posbias.io import atomic_write

        with atomic_write(args.json) as out:
            json.dump(result, out, indent=2)
            out.write("\n")
    print(report)
    if args.json:
        print(f"\nwritten to {args.json}")


if __name__ == "__main__":
    main()
