"""First-stage retrieval by hand (rules/retrieval.smk): the Lucene and dense indexes, BM25 and hybrid candidates,
a run made elsewhere taken as candidates, and the random shuffle of the candidates.

    posbias index --docs docs.jsonl --index idx/ [--expansions d2q.jsonl.gz] --threads 8
    posbias retrieve --index idx/ --queries q.tsv --run cand.run --depth 100
    posbias dense-index --config config.yaml --retriever hybrid --docs docs.jsonl --index dense/
    posbias hybrid --config config.yaml --retriever hybrid --dense dense/ --index idx/ --queries q.tsv --run cand.run
    posbias import-run --run given.run --queries q.tsv --out cand.run --depth 100
    posbias shuffle --candidates cand.run --run random.run --seed 1
"""

from __future__ import annotations

from posbias.command_flags import POSITIVE, SEED, add_command, named_block, number, read_config, reads
from posbias.errors import InputError


def register(commands) -> None:
    idx = add_command(commands, "index", index, help="build a Lucene index of a JSONL document file")
    reads(idx, "--docs", required=True)
    idx.add_argument("--index", required=True)
    idx.add_argument("--threads", type=POSITIVE, default=1)
    reads(idx, "--expansions", help="doc2query file joined to the documents before indexing")
    idx.add_argument("--expansions-sha256", help="refuse --expansions unless its sha256 is this (the config's "
                                                 "collections.<name>.expansions_sha256)")

    dense = add_command(commands, "dense-index", dense_index,
                        help="encode documents into a FAISS index (a hybrid retriever's); the vectors stay in "
                             "INDEX.vectors, and a rerun resumes a killed one")
    dense.add_argument("--config", required=True)
    dense.add_argument("--retriever", required=True)
    reads(dense, "--docs", required=True)
    dense.add_argument("--index", required=True)
    dense.add_argument("--threads", type=POSITIVE, default=1)

    hyb = add_command(commands, "hybrid", hybrid,
                      help="hybrid candidates: dense k-NN re-scored by BM25 + cosine fusion")
    hyb.add_argument("--config", required=True)
    hyb.add_argument("--retriever", required=True)
    reads(hyb, "--dense", "directory", required=True, help="the retriever's FAISS index (posbias dense-index)")
    reads(hyb, "--index", "directory", required=True, help="the Lucene index (posbias index)")
    reads(hyb, "--queries", required=True)
    hyb.add_argument("--run", required=True)
    hyb.add_argument("--depth", type=POSITIVE, default=100)
    hyb.add_argument("--threads", type=POSITIVE, default=1)

    ret = add_command(commands, "retrieve", retrieve, help="BM25 top-k candidates as a TREC run")
    reads(ret, "--index", "directory", required=True)
    reads(ret, "--queries", required=True)
    ret.add_argument("--run", required=True)
    ret.add_argument("--depth", type=POSITIVE, default=100)
    ret.add_argument("--k1", type=number(0, low_open=True), default=0.9)
    ret.add_argument("--b", type=number(0, 1), default=0.4)
    ret.add_argument("--threads", type=POSITIVE, default=1)

    given = add_command(commands, "import-run", import_run,
                        help="a run made elsewhere as a query set's candidates (querysets.<name>.candidates): its "
                             "queries of the query set, each cut to --depth")
    reads(given, "--run", required=True, help="the run made elsewhere (TREC format)")
    reads(given, "--queries", required=True, help="the query set's queries")
    given.add_argument("--out", required=True, help="the candidates (TREC run)")
    given.add_argument("--depth", type=POSITIVE, default=100)

    shuffle_ = add_command(commands, "shuffle", shuffle,
                           help="the random baseline: each query's candidates in a seeded random order")
    reads(shuffle_, "--candidates", required=True)
    shuffle_.add_argument("--run", required=True)
    shuffle_.add_argument("--seed", type=SEED, required=True)


def _hybrid_retriever(config: dict, name: str, path: str) -> dict:
    spec = named_block(config, "retrievers", name, path, "--retriever")
    if spec.get("kind") != "hybrid":
        raise InputError(f"--retriever {name}: retrievers.{name} in {path} is a {spec.get('kind')} retriever, "
                         f"not a hybrid one")
    return spec


def index(args) -> None:
    from posbias.retrieval.steps import index as build_index

    build_index(args.docs, args.index, args.threads, args.expansions, args.expansions_sha256)


def dense_index(args) -> None:
    from posbias.retrieval.steps import encode_and_index

    spec = _hybrid_retriever(read_config(args.config), args.retriever, args.config)
    encode_and_index(args.docs, args.index, spec["encoder"], spec["faiss"], args.threads)


def hybrid(args) -> None:
    from posbias.retrieval.jobs import HybridJob, HybridRetriever
    from posbias.retrieval.steps import hybrid_retrieve

    config = read_config(args.config)
    spec = _hybrid_retriever(config, args.retriever, args.config)
    partner = config["retrievers"][spec["bm25"]]
    retriever = HybridRetriever(args.retriever, spec["encoder"], spec["weight"], partner["k1"], partner["b"])
    hybrid_retrieve(HybridJob(retriever, args.dense, args.index, args.queries, args.run, args.depth), args.threads)


def retrieve(args) -> None:
    from posbias.retrieval.steps import retrieve as bm25_retrieve

    bm25_retrieve(args.index, args.queries, args.run, args.depth, args.k1, args.b, args.threads)


def import_run(args) -> None:
    from posbias.retrieval.steps import import_run as take_run

    take_run(args.run, args.queries, args.out, args.depth)


def shuffle(args) -> None:
    from posbias.retrieval.steps import random_shuffle

    random_shuffle(args.candidates, args.run, args.seed)
