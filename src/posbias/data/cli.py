"""The data stage by hand (rules/data.smk): the embedded collection, a configured collection's documents, query
sets and folds, truncation, the de-biased copy and the token store.

    posbias generate --config config.yaml --out results/data/synthetic --passages results/data/synthetic-passages
    posbias fetch --config config/paper/robust04.yaml --collection robust04 --out docs.jsonl
    posbias fetch --config config/paper/robust04.yaml --queryset robust04_desc --out q.tsv --qrels qrels.txt
    posbias fetch --config config/paper/robust04.yaml --folds robust04_desc --out folds.tsv
    posbias truncate --docs docs.jsonl --out docs.truncated.jsonl --tokenizer bert-base-uncased --max-tokens 1431
    posbias debias --config config.yaml --model maxp_debiased --docs docs.jsonl --out debiased/docs.jsonl
    posbias tokenize --docs docs.jsonl --tokenizer bert-base-uncased --cap 1431 --out tokens/
"""

from __future__ import annotations

from posbias.command_flags import (POSITIVE, add_command, named_block, read_config, read_config_object, reads,
                                   required_section)
from posbias.errors import InputError


def register(commands) -> None:
    gen = add_command(commands, "generate", generate, help="write the embedded synthetic collection")
    gen.add_argument("--config", default="config.yaml")
    gen.add_argument("--out", required=True)
    gen.add_argument("--passages", required=True, help="directory of the FarRelevant passage collection")

    fetch_ = add_command(commands, "fetch", fetch, usage_check=_fetch_usage,
                         help="write a configured collection's documents, a query set, or its folds")
    fetch_.add_argument("--config", required=True)
    what = fetch_.add_mutually_exclusive_group(required=True)
    what.add_argument("--collection", help="write this collection's documents (JSONL) to --out")
    what.add_argument("--queryset", help="write this query set's queries to --out and qrels to --qrels")
    what.add_argument("--folds", metavar="QUERYSET",
                      help="write this cross-validated query set's folds (qid<TAB>fold) to --out")
    fetch_.add_argument("--out", required=True)
    fetch_.add_argument("--qrels")

    trunc = add_command(commands, "truncate", truncate, help="cut documents to their first N tokens of a tokenizer")
    reads(trunc, "--docs", required=True)
    trunc.add_argument("--out", required=True)
    trunc.add_argument("--tokenizer", required=True)
    trunc.add_argument("--max-tokens", type=POSITIVE, required=True)

    debias_ = add_command(commands, "debias", debias,
                          help="the de-biased copy of a collection a model trains on (models.<name>.debias: each "
                               "document rotated at a random word boundary)")
    debias_.add_argument("--config", default="config.yaml")
    debias_.add_argument("--model", required=True, help="a de-biased model of --config")
    reads(debias_, "--docs", required=True, help="the training collection's documents (JSONL)")
    debias_.add_argument("--out", required=True, help="the de-biased documents (JSONL)")

    tok = add_command(commands, "tokenize", tokenize,
                      help="tokenise a collection once into a token store the rankers read")
    reads(tok, "--docs", required=True)
    tok.add_argument("--out", required=True, help="the token store directory")
    tok.add_argument("--tokenizer", required=True, help="the rankers' backbone (HF name or directory)")
    tok.add_argument("--cap", type=POSITIVE, help="keep at most this many tokens per document (default: all)")
    tok.add_argument("--trust-remote-code", action="store_true")
    tok.add_argument("--threads", type=POSITIVE, default=1)


def generate(args) -> None:
    from posbias.data.steps import generate_synthetic

    generator = required_section(read_config(args.config), "generator", args.config)
    generate_synthetic(generator["settings"], generator["tokenizer"], args.out, args.passages)


def _fetch_usage(args) -> str | None:
    if args.queryset and not args.qrels:
        return "--queryset also needs --qrels (where its judgments go)"
    return None


def fetch(args) -> None:
    from posbias.data import steps as data

    config = read_config(args.config)
    if args.collection:
        collection = named_block(config, "collections", args.collection, args.config, "--collection")
        data.fetch_documents(collection["documents"], args.out)
        return
    name = args.queryset or args.folds
    flag = "--queryset" if args.queryset else "--folds"
    queryset = named_block(config, "querysets", name, args.config, flag)
    if args.folds:
        if "folds" not in queryset:
            raise InputError(f"--folds {name}: querysets.{name} in {args.config} has no folds")
        data.fetch_folds(queryset["folds"], args.out)  # as the workflow's fetch_folds job
        return
    if "source" not in queryset:
        raise InputError(f"--queryset {name}: querysets.{name} in {args.config} has no source to fetch (it is "
                         f"generated by the workflow)")
    data.fetch_queryset(queryset["source"], args.out, args.qrels)


def truncate(args) -> None:
    from posbias.data.steps import truncate_documents

    truncate_documents(args.docs, args.out, args.tokenizer, args.max_tokens)


def debias(args) -> None:
    from posbias.data.steps import debias_collection

    cfg = read_config_object(args.config)
    named_block(cfg.data, "models", args.model, args.config, "--model")
    if not cfg.models[args.model].debias:
        raise InputError(f"--model {args.model}: models.{args.model} in {args.config} has no debias block")
    copy = cfg.models.debiased_collections[cfg.models.training_collection(args.model)]  # the debias job's params
    debias_collection(args.docs, args.out, copy["n_splits"], copy["seed"])


def tokenize(args) -> None:
    from posbias.data.steps import tokenize_documents

    tokenize_documents(args.docs, args.out, args.tokenizer, args.cap, args.trust_remote_code, args.threads)
