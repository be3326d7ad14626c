"""First-stage throughput: Lucene BM25 queries/second with 1 and 2 search threads, and FAISS k-NN
queries/second for a flat (exact) and an HNSW index, with HNSW's recall@10 against flat.

The BM25 collection is synthetic: documents of Zipf-distributed words (seeded), indexed with
`posbias.retrieval.bm25.build_index`. The FAISS vectors are random clustered unit vectors of
MiniLM's dimension, not encoded text (encoding 100k documents on 2 CPU cores takes too long).
Every ratio is between two measurements of the same run.

    .venv/bin/python benchmarks/first_stage_qps.py [--docs 100000] [--vectors 100000] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from posbias.io import atomic_write, write_documents
from posbias.retrieval import bm25, faiss_index
from posbias.retrieval.faiss_index import FaissSettings


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=100_000, help="documents in the BM25 collection")
    parser.add_argument("--vocab", type=int, default=50_000, help="distinct words")
    parser.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent of word frequencies")
    parser.add_argument("--doc-words", type=int, default=100, help="mean document length in words")
    parser.add_argument("--queries", type=int, default=2000, help="BM25 queries")
    parser.add_argument("--k", type=int, default=100, help="hits per BM25 query")
    parser.add_argument("--vectors", type=int, default=100_000, help="vectors in the FAISS indexes")
    parser.add_argument("--dim", type=int, default=384, help="vector dimension (MiniLM: 384)")
    parser.add_argument("--clusters", type=int, default=1000, help="clusters of the random vectors (0: uniform)")
    parser.add_argument("--knn-queries", type=int, default=1000, help="FAISS queries")
    parser.add_argument("--knn-k", type=int, default=100, help="neighbours per FAISS query")
    parser.add_argument("--single-queries", type=int, default=200,
                        help="FAISS queries also timed one per call (latency-bound use, no batching)")
    parser.add_argument("--hnsw-m", type=int, default=FaissSettings.m)
    parser.add_argument("--ef-construction", type=int, default=FaissSettings.ef_construction)
    parser.add_argument("--ef-search", type=int, default=FaissSettings.ef_search)
    parser.add_argument("--repeats", type=int, default=3, help="timed repetitions; the median is reported")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", help="keep the collection and index here (default: a temporary directory)")
    parser.add_argument("--out", default="results/benchmarks/first_stage_qps.json")
    return parser.parse_args()


# --- BM25 ------------------------------------------------------------------

def zipf_probabilities(vocab: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, vocab + 1) ** exponent
    return weights / weights.sum()


def word(rank: int) -> str:
    return f"w{rank}x"  # letters around the number: the analyzer keeps it one token, no stemming


def generate_collection(path: Path, args: argparse.Namespace, rng: np.random.Generator) -> None:
    probabilities = zipf_probabilities(args.vocab, args.zipf)
    lengths = rng.poisson(args.doc_words, size=args.docs).clip(min=5)
    word_ids = rng.choice(args.vocab, size=int(lengths.sum()), p=probabilities)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    write_documents(path, ({"id": f"D{i}", "text": " ".join(word(w) for w in word_ids[bounds[i]:bounds[i + 1]])}
                           for i in range(args.docs)))


def generate_queries(args: argparse.Namespace, rng: np.random.Generator) -> dict[str, str]:
    """2 to 4 words each, Zipf-distributed like the documents but without the 100 most frequent (stopword-like)."""
    probabilities = zipf_probabilities(args.vocab, args.zipf)[100:]
    probabilities /= probabilities.sum()
    return {f"Q{i}": " ".join(word(100 + w) for w in rng.choice(len(probabilities), size=rng.integers(2, 5),
                                                               p=probabilities))
            for i in range(args.queries)}


def time_bm25(index_dir: Path, queries: dict[str, str], k: int, threads: int) -> float:
    start = time.perf_counter()
    bm25.search(str(index_dir), queries, k=k, k1=0.9, b=0.4, threads=threads)
    return time.perf_counter() - start


def bm25_benchmark(workdir: Path, args: argparse.Namespace) -> dict:
    rng = np.random.default_rng(args.seed)
    docs_path, index_dir = workdir / "docs.jsonl", workdir / "lucene"
    start = time.perf_counter()
    generate_collection(docs_path, args, rng)
    generated = time.perf_counter() - start
    start = time.perf_counter()
    bm25.build_index(str(docs_path), str(index_dir), threads=2)
    indexed = time.perf_counter() - start
    queries = generate_queries(args, rng)
    warmup = dict(list(queries.items())[:200])
    for threads in (1, 2):  # imports, JVM start and JIT compilation stay out of the timings
        time_bm25(index_dir, warmup, args.k, threads)
    seconds = {1: [], 2: []}
    for _ in range(args.repeats):  # interleaved, so a load change on the machine affects both alike
        for threads in (1, 2):
            seconds[threads].append(time_bm25(index_dir, queries, args.k, threads))
    qps = {threads: len(queries) / statistics.median(times) for threads, times in seconds.items()}
    return {"docs": args.docs, "generate_s": generated, "index_s": indexed, "index_threads": 2,
            "queries": len(queries), "k": args.k, "seconds": {str(t): s for t, s in seconds.items()},
            "qps_1_thread": qps[1], "qps_2_threads": qps[2], "ratio_2_over_1": qps[2] / qps[1]}


# --- FAISS -----------------------------------------------------------------

def clustered_unit_vectors(n: int, centroids: np.ndarray | None, rng: np.random.Generator, dim: int) -> np.ndarray:
    """Unit vectors scattered around random centroids (a crude stand-in for text embeddings)."""
    noise = rng.standard_normal((n, dim), dtype=np.float32)
    if centroids is not None:
        noise = centroids[rng.integers(len(centroids), size=n)] + 0.5 * noise / np.sqrt(dim)
    return noise / np.linalg.norm(noise, axis=1, keepdims=True)


def time_knn(index, queries: np.ndarray, k: int, repeats: int) -> tuple[float, np.ndarray]:
    faiss_index.search(index, queries[:50], k)  # warm-up
    times, positions = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        _, positions = faiss_index.search(index, queries, k)
        times.append(time.perf_counter() - start)
    return len(queries) / statistics.median(times), positions


def time_single_queries(index, queries: np.ndarray, k: int) -> float:
    start = time.perf_counter()
    for row in range(len(queries)):
        faiss_index.search(index, queries[row:row + 1], k)
    return len(queries) / (time.perf_counter() - start)


def recall_at_10(positions: np.ndarray, exact: np.ndarray) -> float:
    return float(np.mean([len(set(got[:10]) & set(want[:10])) / 10 for got, want in zip(positions, exact)]))


def faiss_benchmark(args: argparse.Namespace) -> dict:
    import faiss

    rng = np.random.default_rng(args.seed + 1)
    centroids = clustered_unit_vectors(args.clusters, None, rng, args.dim) if args.clusters else None
    vectors = clustered_unit_vectors(args.vectors, centroids, rng, args.dim)
    queries = clustered_unit_vectors(args.knn_queries, centroids, rng, args.dim)
    flat = faiss_index.build(vectors, FaissSettings(index="flat", use_gpu=False), progress=False)
    hnsw_settings = FaissSettings(index="hnsw", m=args.hnsw_m, ef_construction=args.ef_construction,
                                  ef_search=args.ef_search, use_gpu=False)
    start = time.perf_counter()
    hnsw = faiss_index.build(vectors, hnsw_settings, progress=True)
    hnsw_build = time.perf_counter() - start
    flat_qps, exact = time_knn(flat, queries, args.knn_k, args.repeats)
    hnsw_qps, approximate = time_knn(hnsw, queries, args.knn_k, args.repeats)
    single = queries[:args.single_queries]
    flat_single_qps, hnsw_single_qps = (time_single_queries(index, single, args.knn_k) for index in (flat, hnsw))
    return {"vectors": args.vectors, "dim": args.dim, "data": f"random unit vectors, {args.clusters} clusters",
            "queries": args.knn_queries, "k": args.knn_k, "omp_threads": faiss.omp_get_max_threads(),
            "hnsw": {"m": args.hnsw_m, "ef_construction": args.ef_construction, "ef_search": args.ef_search},
            "hnsw_build_s": hnsw_build, "flat_qps": flat_qps, "hnsw_qps": hnsw_qps,
            "ratio_hnsw_over_flat": hnsw_qps / flat_qps, "hnsw_recall_at_10": recall_at_10(approximate, exact),
            "single_queries": len(single), "flat_single_qps": flat_single_qps, "hnsw_single_qps": hnsw_single_qps,
            "single_ratio_hnsw_over_flat": hnsw_single_qps / flat_single_qps}


# --- report ----------------------------------------------------------------

def markdown(result: dict) -> str:
    b, f = result["bm25"], result["faiss"]
    hnsw = f"FAISS HNSW (m={f['hnsw']['m']}, ef_search={f['hnsw']['ef_search']})"
    rows = [("BM25 `bm25.search`, 1 search thread", f"{b['qps_1_thread']:.1f}", "1.00 (reference)", ""),
            ("BM25 `bm25.search`, 2 search threads", f"{b['qps_2_threads']:.1f}", f"{b['ratio_2_over_1']:.2f}", ""),
            ("FAISS flat (exact), batched", f"{f['flat_qps']:.1f}", "1.00 (reference)", "1.000"),
            (f"{hnsw}, batched", f"{f['hnsw_qps']:.1f}", f"{f['ratio_hnsw_over_flat']:.2f}",
             f"{f['hnsw_recall_at_10']:.3f}"),
            ("FAISS flat (exact), one query per call", f"{f['flat_single_qps']:.1f}", "1.00 (reference)", "1.000"),
            (f"{hnsw}, one query per call", f"{f['hnsw_single_qps']:.1f}", f"{f['single_ratio_hnsw_over_flat']:.2f}",
             "")]
    lines = ["| first stage | queries/s | ratio | recall@10 vs flat |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {' | '.join(row)} |" for row in rows]
    lines.append(f"\nBM25: {b['docs']:,} Zipf documents (indexed in {b['index_s']:.0f} s), {b['queries']} queries, "
                 f"k={b['k']}, median of {result['repeats']} runs.")
    lines.append(f"FAISS: {f['vectors']:,} x {f['dim']} {f['data']} (not encoded text), k={f['k']}, "
                 f"{f['omp_threads']} OpenMP threads; batched: {f['queries']} queries per call, median of "
                 f"{result['repeats']} runs; one per call: {f['single_queries']} queries. "
                 f"HNSW built in {f['hnsw_build_s']:.0f} s.")
    machine = result["machine"]
    lines.append(f"Machine: {machine['cpus']} CPUs, load average {machine['load_average_at_start'][0]:.2f} at start, "
                 f"{machine['load_average_at_end'][0]:.2f} at end.")
    return "\n".join(lines)


def main() -> None:
    args = parse_args()
    machine = {"cpus": os.cpu_count(), "load_average_at_start": os.getloadavg(), "python": platform.python_version()}
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="first-stage-qps-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        result = {"machine": machine, "repeats": args.repeats, "seed": args.seed,
                  "bm25": bm25_benchmark(workdir, args), "faiss": faiss_benchmark(args)}
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    result["machine"]["load_average_at_end"] = os.getloadavg()
    with atomic_write(args.out) as out:
        json.dump(result, out, indent=2)
    print(markdown(result))
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
