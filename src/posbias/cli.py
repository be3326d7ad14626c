"""The `posbias` command line: every step the workflow runs, runnable by hand.

    posbias generate --config config.yaml --out results/data/synthetic --passages results/data/synthetic-passages
    posbias fetch --config config/paper/robust04.yaml --collection robust04 --out docs.jsonl
    posbias fetch --config config/paper/robust04.yaml --queryset robust04_desc --out q.tsv --qrels qrels.txt
    posbias truncate --docs docs.jsonl --out docs.truncated.jsonl --tokenizer bert-base-uncased --max-tokens 1431
    posbias index --docs docs.jsonl --index idx/ [--expansions d2q.jsonl.gz] --threads 8
    posbias retrieve --index idx/ --queries q.tsv --run cand.run --depth 100
    posbias dense-index --config config.yaml --retriever hybrid --docs docs.jsonl --index dense/
    posbias hybrid --config config.yaml --retriever hybrid --dense dense/ --index idx/ --queries q.tsv --run cand.run
    posbias tokenize --docs docs.jsonl --tokenizer bert-base-uncased --cap 1431 --out tokens/
    posbias train --config config.yaml --model maxp --seed 1 --tokens tokens/ --queries ... --qrels ... --candidates ... --out ckpt/
    posbias rerank --checkpoint ckpt/ --tokens tokens/ --queries ... --candidates ... --run out.run
    posbias evaluate --qrels qrels.txt --run out.run --metric RR@10 --metric nDCG@10
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

import yaml


SCHEMA = Path(__file__).resolve().parent / "config.schema.yaml"


def _load_config(path: str) -> dict:
    """The config file, validated against the workflow's schema with its defaults filled in."""
    from snakemake.utils import validate

    with open(path, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    validate(config, str(SCHEMA))
    return config


def _block(config: dict, section: str, name: str) -> dict:
    if name not in config.get(section, {}):
        raise SystemExit(f"{section}.{name}: not in the config; known: {sorted(config.get(section, {}))}")
    return config[section][name]


def _model_block(config: dict, name: str) -> dict:
    return _block(config, "models", name)


def _hybrid_retriever(config: dict, name: str) -> dict:
    spec = _block(config, "retrievers", name)
    if spec.get("kind") != "hybrid":
        raise SystemExit(f"retrievers.{name}: not a hybrid retriever")
    return spec


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="posbias", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    gen = commands.add_parser("generate", help="write the embedded synthetic collection")
    gen.add_argument("--config", default="config.yaml")
    gen.add_argument("--out", required=True)
    gen.add_argument("--passages", required=True, help="directory of the FarRelevant passage collection")

    far = commands.add_parser("farrelevant", help="build FarRelevant documents from a passage collection")
    far.add_argument("--config", default="config.yaml")
    far.add_argument("--passages", required=True)
    far.add_argument("--queries", required=True)
    far.add_argument("--qrels", required=True)
    far.add_argument("--out", required=True)
    far.add_argument("--queryset", default="farrelevant")

    fetch = commands.add_parser("fetch", help="write a configured collection's documents, or a query set")
    fetch.add_argument("--config", required=True)
    what = fetch.add_mutually_exclusive_group(required=True)
    what.add_argument("--collection", help="write this collection's documents (JSONL) to --out")
    what.add_argument("--queryset", help="write this query set's queries to --out and qrels to --qrels")
    fetch.add_argument("--out", required=True)
    fetch.add_argument("--qrels")

    trunc = commands.add_parser("truncate", help="cut documents to their first N tokens of a tokenizer")
    trunc.add_argument("--docs", required=True)
    trunc.add_argument("--out", required=True)
    trunc.add_argument("--tokenizer", required=True)
    trunc.add_argument("--max-tokens", type=int, required=True)

    idx = commands.add_parser("index", help="build a Lucene index of a JSONL document file")
    idx.add_argument("--docs", required=True)
    idx.add_argument("--index", required=True)
    idx.add_argument("--threads", type=int, default=1)
    idx.add_argument("--expansions", help="doc2query file joined to the documents before indexing")

    dense = commands.add_parser("dense-index", help="encode documents into a FAISS index (a hybrid retriever's)")
    dense.add_argument("--config", required=True)
    dense.add_argument("--retriever", required=True)
    dense.add_argument("--docs", required=True)
    dense.add_argument("--index", required=True)
    dense.add_argument("--threads", type=int, default=1)

    hyb = commands.add_parser("hybrid", help="hybrid candidates: dense k-NN re-scored by BM25 + cosine fusion")
    hyb.add_argument("--config", required=True)
    hyb.add_argument("--retriever", required=True)
    for name in ("dense", "index", "queries", "run"):
        hyb.add_argument(f"--{name}", required=True)
    hyb.add_argument("--depth", type=int, default=100)
    hyb.add_argument("--threads", type=int, default=1)

    ret = commands.add_parser("retrieve", help="BM25 top-k candidates as a TREC run")
    ret.add_argument("--index", required=True)
    ret.add_argument("--queries", required=True)
    ret.add_argument("--run", required=True)
    ret.add_argument("--depth", type=int, default=100)
    ret.add_argument("--k1", type=float, default=0.9)
    ret.add_argument("--b", type=float, default=0.4)
    ret.add_argument("--threads", type=int, default=1)

    tok = commands.add_parser("tokenize", help="tokenise a collection once into a token store the rankers read")
    tok.add_argument("--docs", required=True)
    tok.add_argument("--out", required=True, help="the token store directory")
    tok.add_argument("--tokenizer", required=True, help="the rankers' backbone (HF name or directory)")
    tok.add_argument("--cap", type=int, help="keep at most this many tokens per document (default: all)")
    tok.add_argument("--trust-remote-code", action="store_true")
    tok.add_argument("--threads", type=int, default=1)

    tr = commands.add_parser("train", help="fine-tune one configured model with one seed (re-running the same "
                                           "command after a kill resumes from <out>.resume/)")
    tr.add_argument("--config", default="config.yaml")
    tr.add_argument("--model", required=True)
    tr.add_argument("--seed", type=int, required=True)
    tr.add_argument("--tokens", required=True, help="token store of the collection (posbias tokenize)")
    for name in ("queries", "qrels", "candidates", "out"):
        tr.add_argument(f"--{name}", required=True)
    tr.add_argument("--threads", type=int, default=1)

    rr = commands.add_parser("rerank", help="rerank candidates with a checkpoint")
    rr.add_argument("--tokens", required=True, help="token store of the collection (posbias tokenize)")
    for name in ("checkpoint", "queries", "candidates", "run"):
        rr.add_argument(f"--{name}", required=True)
    rr.add_argument("--tag", default="posbias")
    rr.add_argument("--batch-size", type=int, default=32)
    rr.add_argument("--device", default="auto")
    rr.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16", "fp16"],
                    help="the backbone's autocast dtype on CUDA; scores always come from an fp32 head")
    rr.add_argument("--threads", type=int, default=1)

    ev = commands.add_parser("evaluate", help="evaluate a run (trec_eval semantics); prints JSON")
    ev.add_argument("--qrels", required=True)
    ev.add_argument("--run", required=True)
    ev.add_argument("--metric", action="append", default=None, help="ir_measures name, repeatable")
    ev.add_argument("--per-query", help="also write per-query values to this Parquet file")
    ev.add_argument("--rel-level", type=int, default=1,
                    help="lowest grade that counts as relevant (trec_eval -l); nDCG keeps graded gains")

    cmp = commands.add_parser("compare", help="compare two runs query by query (paired tests, outcome breakdown); "
                                              "prints JSON")
    cmp.add_argument("--qrels", required=True)
    cmp.add_argument("--run", action="append", required=True, help="given twice: run A, then run B")
    cmp.add_argument("--metric", default="RR@10", help="ir_measures name of the metric to test")
    cmp.add_argument("--k", type=int, default=100, help="cut-off of the outcome breakdown (RR@k)")
    cmp.add_argument("--seed", type=int, default=0, help="seed of the randomisation test")
    cmp.add_argument("--permutations", type=int, default=10000, help="sign flips of the randomisation test")
    cmp.add_argument("--rel-level", type=int, default=1, help="lowest grade that counts as relevant")
    cmp.set_defaults(compare_error=cmp.error)  # lets _dispatch reject a wrong number of --run as argparse would

    args = parser.parse_args(argv)
    from posbias.logs import job_log

    with job_log(None):
        return _dispatch(args)


def _dispatch(args) -> int:
    if args.command == "generate":
        from posbias.steps.data import generate_synthetic

        config = _load_config(args.config)
        generate_synthetic(config["generator"]["settings"], config["generator"]["tokenizer"], args.out, args.passages)
    elif args.command == "farrelevant":
        from posbias.steps.data import build_farrelevant

        config = _load_config(args.config)["farrelevant"]
        build_farrelevant(args.passages, args.queries, args.qrels, config, config["tokenizer"], args.out,
                          args.queryset)
    elif args.command == "fetch":
        from posbias.steps import data

        config = _load_config(args.config)
        if args.collection:
            data.fetch_documents(_block(config, "collections", args.collection)["documents"], args.out)
        else:
            if not args.qrels:
                raise SystemExit("fetch --queryset also needs --qrels")
            data.fetch_queryset(_block(config, "querysets", args.queryset)["source"], args.out, args.qrels)
    elif args.command == "truncate":
        from posbias.steps.data import truncate_documents

        truncate_documents(args.docs, args.out, args.tokenizer, args.max_tokens)
    elif args.command == "index":
        from posbias.steps.retrieval import index

        index(args.docs, args.index, args.threads, args.expansions)
    elif args.command == "dense-index":
        from posbias.steps.retrieval import dense_index

        spec = _hybrid_retriever(_load_config(args.config), args.retriever)
        dense_index(args.docs, args.index, spec["encoder"], spec["faiss"], args.threads)
    elif args.command == "hybrid":
        from posbias.steps.retrieval import hybrid_retrieve

        config = _load_config(args.config)
        spec = _hybrid_retriever(config, args.retriever)
        partner = _block(config, "retrievers", spec["bm25"])
        hybrid_retrieve(args.dense, args.index, args.queries, args.run, args.depth, spec["encoder"],
                        spec["weight"], {"k1": partner["k1"], "b": partner["b"]}, args.retriever, args.threads)
    elif args.command == "retrieve":
        from posbias.steps.retrieval import retrieve

        retrieve(args.index, args.queries, args.run, args.depth, args.k1, args.b, args.threads)
    elif args.command == "tokenize":
        from posbias.steps.data import tokenize_documents

        with _user_errors("tokenize"):
            tokenize_documents(args.docs, args.out, args.tokenizer, args.cap, args.trust_remote_code, args.threads)
    elif args.command == "train":
        from posbias.settings import training_recipe
        from posbias.steps.training import train_model

        config = _load_config(args.config)
        training = training_recipe(config["training"])
        with _user_errors("train"):
            train_model(_model_block(config, args.model), training, args.seed, args.tokens, args.queries,
                        args.qrels, args.candidates, args.out, args.threads, name=args.model)
    elif args.command == "rerank":
        from posbias.steps.training import rerank_candidates

        scoring = {"batch_size": args.batch_size, "device": args.device, "precision": args.precision}
        with _user_errors("rerank"):
            rerank_candidates(args.checkpoint, [args.tokens], [args.queries], [args.candidates], [args.run],
                              args.tag, scoring, args.threads)
    elif args.command == "evaluate":
        from posbias.evaluation.metrics import parse_metrics, per_query
        from posbias.io import read_qrels, read_run
        from posbias.steps.evaluate import write_parquet

        metrics = args.metric or ["RR@10", "nDCG@10"]
        with _user_errors("evaluate"):
            parse_metrics(metrics)  # a misspelt metric fails before the files are read
            frame = per_query(read_qrels(args.qrels), read_run(args.run), metrics, rel_level=args.rel_level)
        summary = frame.groupby("metric", sort=False)["value"].mean().to_dict()
        summary["n_queries"] = int(frame["qid"].nunique())
        if args.per_query:
            write_parquet(frame, args.per_query)
        json.dump(summary, sys.stdout)
        sys.stdout.write("\n")
    elif args.command == "compare":
        with _user_errors("compare"):
            result = _compare(args)
        json.dump(result, sys.stdout, allow_nan=False)
        sys.stdout.write("\n")
    return 0


@contextlib.contextmanager
def _user_errors(command: str):
    """A malformed input line (io.FormatError, "path:line: ..."), a missing file or a bad metric name is a
    user error, not a crash: one line on stderr and argparse's exit status 2, no traceback."""
    try:
        yield
    except (ValueError, OSError) as err:
        print(f"posbias {command}: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None


def _compare(args) -> dict:
    """`posbias compare`: run A against run B on the queries evaluated for both."""
    from posbias.evaluation.metrics import parse_metrics, per_query
    from posbias.io import read_qrels, read_run
    from posbias.stats.outcomes import outcome_breakdown, rank_sum_p
    from posbias.stats.paired import compare_paired, json_number

    if len(args.run) != 2:
        args.compare_error(f"--run must be given exactly twice (run A, run B), not {len(args.run)} times")
    if args.k < 1 or args.permutations < 1:
        args.compare_error("--k and --permutations must be at least 1")
    cutoff = f"RR@{args.k}"
    metrics = list(dict.fromkeys([args.metric, cutoff]))  # the metric may be RR@k itself
    parse_metrics(metrics)  # a misspelt metric fails before the files are read
    qrels = read_qrels(args.qrels)
    values = []
    for path in args.run:
        frame = per_query(qrels, read_run(path), metrics, rel_level=args.rel_level)
        if frame.empty:
            raise ValueError(f"no query of {path} is judged in {args.qrels}")
        values.append({name: group.set_index("qid")["value"] for name, group in frame.groupby("metric")})
    a, b = values
    qids_a, qids_b = set(a[cutoff].index), set(b[cutoff].index)
    common = sorted(qids_a & qids_b)
    if not common:
        raise ValueError(f"no query is evaluated for both {args.run[0]} and {args.run[1]}")
    n_only_a, n_only_b = len(qids_a - qids_b), len(qids_b - qids_a)
    if n_only_a or n_only_b:
        # A query a run did not answer at all is skipped (trec_eval without -c); pairing needs both.
        print(f"warning: {n_only_a} queries evaluated only for {args.run[0]} and {n_only_b} only for "
              f"{args.run[1]}; comparing the {len(common)} evaluated for both", file=sys.stderr)
    metric_a, metric_b = a[args.metric].loc[common], b[args.metric].loc[common]
    return {
        "metric": args.metric,
        "run_a": args.run[0],
        "run_b": args.run[1],
        **compare_paired(metric_a, metric_b, args.permutations, args.seed).to_dict(),
        "wilcoxon_rank_sum": {"p": json_number(rank_sum_p(metric_a, metric_b))},
        "outcomes": outcome_breakdown(a[cutoff].loc[common], b[cutoff].loc[common], args.k).to_dict(),
        # queries evaluated for one run only (it returned nothing for them), left out of every test
        "unpaired_queries": {"only_in_a": n_only_a, "only_in_b": n_only_b},
    }


if __name__ == "__main__":
    sys.exit(main())
