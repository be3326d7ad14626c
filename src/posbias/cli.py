"""The `posbias` command line: the workflow's steps by hand.

It covers the data, retrieval, training, reranking, evaluation, comparisons, provenance, the regression check and
the four analysis stages, whose commands (litm, probes, positions, sweep) their folders' cli.py register, named by
their config sections (`posbias.config.registry.stages`), and the study's seed pooling, model tables, outcome
table and first-stage table (`posbias study`, posbias/study_cli.py). The study's figures, dataset tables,
cross-validation folds and fine-tuning run only through the workflow's scripts/ so far.

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
    posbias rerank --model longp_rankgpt --config config.yaml --docs docs.jsonl --queries ... --candidates ...
        --run out.run          (RankGPT: document texts, answers through the config's llm.cache)
    posbias litm build --config config.yaml --task qa --out litm/data/qa
    posbias litm run --config config.yaml --task qa --model smollm2 --data litm/data/qa --out litm/predictions/qa
    posbias litm score --predictions litm/predictions/qa/default/k5_gold_at_2.jsonl.gz
    posbias probes build --config config.yaml --out probes/pairs
    posbias probes score --config config.yaml --scorer minilm --pairs probes/pairs --out probes/scores
    posbias probes report --config config.yaml --pairs probes/pairs --scores probes/scores --out probes/report
    posbias probes rag --config my_probes.yaml --pairs probes/pairs --out probes/rag
    posbias positions locate --config config.yaml --set dev --docs ... --queries ... --qrels ... --passages ...
        --passage-qrels ... --out positions/          (one positions.sets entry; a dense set's judge through llm.cache)
    posbias positions report --config config.yaml --rows positions/ --out positions/report
    posbias sweep build --config config.yaml --queries ... --qrels ... --docs ... --positions ... --candidates ...
        --passages ... --passage-qrels ... --out sweep/
    posbias sweep report --config config.yaml --per-seed per_seed.parquet --positions ... --candidates ... --out out/
    posbias sweep breakdown --config config.yaml --averaged seed_averaged.parquet --positions ... --out out/
    posbias evaluate --qrels qrels.txt --run out.run --metric RR@10 --metric nDCG@10
    posbias study combine-seeds --values a.parquet b.parquet --per-seed per_seed.parquet --averaged averaged.parquet
    posbias study table --config config.yaml --name table1 --averaged dev/seed_averaged.parquet ... --out results/
    posbias compare --qrels qrels.txt --run a.run --run b.run --metric RR@10 [--json]
    posbias provenance [--config config.yaml]      (the environment, and a config's hash, as manifests record them)
    posbias regress --results results --expected config/regression/demo.yaml [--write-expected]
    posbias regress --reproduction --config config/paper/study.yaml [--results results/study]

Bad input is reported as one line, `posbias <command>: error: <message>`, that names the file (and line),
the flag or the config key, with exit status 2 and no traceback: a missing, empty, malformed, binary,
truncated or mislabelled compressed file; a document missing from a token store or index; a missing or
incomplete index, token store or checkpoint; a config that is not valid YAML or breaks its schema, or lacks
the named model, retriever, collection or query set. Numeric flags out of range are refused by the argument
parser, naming the flag. Every output file or directory is written atomically, so a failed command leaves
none behind. An empty qrels, run, candidates or queries file is an error, and so is a run none of whose
queries is judged; any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import sys

from posbias.command_flags import (POSITIVE, SEED, check_reads, named_block, number, read_config,
                                   read_config_object, reads, required_section, word)
from posbias.errors import InputError, first_line

DEFAULT_METRICS = ["RR@10", "nDCG@10"]


def _hybrid_retriever(config: dict, name: str, path: str) -> dict:
    spec = named_block(config, "retrievers", name, path, "--retriever")
    if spec.get("kind") != "hybrid":
        raise InputError(f"--retriever {name}: retrievers.{name} in {path} is a {spec.get('kind')} retriever, "
                         f"not a hybrid one")
    return spec


# --- commands ----------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="posbias", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    gen = commands.add_parser("generate", help="write the embedded synthetic collection")
    gen.add_argument("--config", default="config.yaml")
    gen.add_argument("--out", required=True)
    gen.add_argument("--passages", required=True, help="directory of the FarRelevant passage collection")

    far = commands.add_parser("farrelevant", help="build FarRelevant documents from a passage collection")
    far.add_argument("--config", default="config.yaml")
    for name in ("passages", "queries", "qrels"):
        reads(far, f"--{name}", required=True)
    far.add_argument("--out", required=True)
    far.add_argument("--queryset", default="farrelevant")

    far_source = commands.add_parser("farrelevant-source", help="build FarRelevant from MS MARCO passages "
                                     "(ir_datasets) or import it, as the config's farrelevant.source says")
    far_source.add_argument("--config", required=True)
    far_source.add_argument("--out", required=True, help="directory for docs.jsonl, queries/, qrels/, positions/")

    fetch = commands.add_parser("fetch", help="write a configured collection's documents, or a query set")
    fetch.add_argument("--config", required=True)
    what = fetch.add_mutually_exclusive_group(required=True)
    what.add_argument("--collection", help="write this collection's documents (JSONL) to --out")
    what.add_argument("--queryset", help="write this query set's queries to --out and qrels to --qrels")
    fetch.add_argument("--out", required=True)
    fetch.add_argument("--qrels")

    trunc = commands.add_parser("truncate", help="cut documents to their first N tokens of a tokenizer")
    reads(trunc, "--docs", required=True)
    trunc.add_argument("--out", required=True)
    trunc.add_argument("--tokenizer", required=True)
    trunc.add_argument("--max-tokens", type=POSITIVE, required=True)

    idx = commands.add_parser("index", help="build a Lucene index of a JSONL document file")
    reads(idx, "--docs", required=True)
    idx.add_argument("--index", required=True)
    idx.add_argument("--threads", type=POSITIVE, default=1)
    reads(idx, "--expansions", help="doc2query file joined to the documents before indexing")

    dense = commands.add_parser("dense-index", help="encode documents into a FAISS index (a hybrid retriever's)")
    dense.add_argument("--config", required=True)
    dense.add_argument("--retriever", required=True)
    reads(dense, "--docs", required=True)
    dense.add_argument("--index", required=True)
    dense.add_argument("--threads", type=POSITIVE, default=1)

    hyb = commands.add_parser("hybrid", help="hybrid candidates: dense k-NN re-scored by BM25 + cosine fusion")
    hyb.add_argument("--config", required=True)
    hyb.add_argument("--retriever", required=True)
    reads(hyb, "--dense", "directory", required=True, help="the retriever's FAISS index (posbias dense-index)")
    reads(hyb, "--index", "directory", required=True, help="the Lucene index (posbias index)")
    reads(hyb, "--queries", required=True)
    hyb.add_argument("--run", required=True)
    hyb.add_argument("--depth", type=POSITIVE, default=100)
    hyb.add_argument("--threads", type=POSITIVE, default=1)

    ret = commands.add_parser("retrieve", help="BM25 top-k candidates as a TREC run")
    reads(ret, "--index", "directory", required=True)
    reads(ret, "--queries", required=True)
    ret.add_argument("--run", required=True)
    ret.add_argument("--depth", type=POSITIVE, default=100)
    ret.add_argument("--k1", type=number(0, low_open=True), default=0.9)
    ret.add_argument("--b", type=number(0, 1), default=0.4)
    ret.add_argument("--threads", type=POSITIVE, default=1)

    tok = commands.add_parser("tokenize", help="tokenise a collection once into a token store the rankers read")
    reads(tok, "--docs", required=True)
    tok.add_argument("--out", required=True, help="the token store directory")
    tok.add_argument("--tokenizer", required=True, help="the rankers' backbone (HF name or directory)")
    tok.add_argument("--cap", type=POSITIVE, help="keep at most this many tokens per document (default: all)")
    tok.add_argument("--trust-remote-code", action="store_true")
    tok.add_argument("--threads", type=POSITIVE, default=1)

    tr = commands.add_parser("train", help="fine-tune one configured model with one seed (re-running the same "
                                           "command after a kill resumes from <out>.resume/)")
    tr.add_argument("--config", default="config.yaml")
    tr.add_argument("--model", required=True)
    tr.add_argument("--seed", type=SEED, required=True)
    reads(tr, "--tokens", "directory", required=True, help="token store of the collection (posbias tokenize)")
    for name in ("queries", "qrels", "candidates"):
        reads(tr, f"--{name}", required=True)
    tr.add_argument("--out", required=True)
    tr.add_argument("--threads", type=POSITIVE, default=1)

    rr = commands.add_parser("rerank", help="rerank candidates with a checkpoint, or with a zero-shot model of a config")
    reads(rr, "--tokens", "directory", help="token store of the collection (posbias tokenize); for every ranker "
                                             "but a listwise one")
    reads(rr, "--docs", help="the collection's documents (JSONL), for a listwise --model (RankGPT)")
    reads(rr, "--checkpoint", "directory", help="a trained checkpoint (posbias train)")
    rr.add_argument("--model", help="instead of --checkpoint: a zero-shot model of --config (zero_shot: true), "
                                    "scored with its pretrained weights, or a RankGPT model (its language model "
                                    "answers through the config's llm.cache)")
    rr.add_argument("--config", default="config.yaml", help="the config of --model")
    rr.add_argument("--cache-mode", choices=["read_write", "read_only", "off"],
                    help="RankGPT: the response cache's mode instead of the config's llm.cache.mode (read_only "
                         "replays recorded answers and never calls a model)")
    for name in ("queries", "candidates"):
        reads(rr, f"--{name}", required=True)
    rr.add_argument("--run", required=True)
    rr.add_argument("--tag", type=word, default="posbias")
    rr.add_argument("--batch-size", type=POSITIVE, default=32)
    rr.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    rr.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16", "fp16"],
                    help="the backbone's autocast dtype (auto: bf16 or fp16 on CUDA, fp32 on a CPU; bf16 also runs on a CPU); "
                         "scores always come from an fp32 head")
    rr.add_argument("--threads", type=POSITIVE, default=1)

    ev = commands.add_parser("evaluate", help="evaluate a run (trec_eval semantics); prints JSON; an empty qrels "
                                              "or run, or a run with no judged query, is an error")
    reads(ev, "--qrels", required=True)
    reads(ev, "--run", required=True)
    ev.add_argument("--metric", action="append", default=None,
                    help=f"ir_measures name, repeatable (default: {' and '.join(DEFAULT_METRICS)})")
    ev.add_argument("--per-query", help="also write per-query values to this Parquet file")
    ev.add_argument("--rel-level", type=POSITIVE, default=1,
                    help="lowest grade that counts as relevant (trec_eval -l); nDCG keeps graded gains; "
                         "a level above every grade in the qrels is warned about")

    cmp = commands.add_parser("compare", help="compare two runs query by query (paired tests, outcome breakdown); "
                                              "prints a summary table, or every number as JSON with --json; an "
                                              "empty qrels or run, or a run with no judged query, is an error")
    reads(cmp, "--qrels", required=True)
    reads(cmp, "--run", action="append", required=True, help="given twice: run A, then run B")
    cmp.add_argument("--metric", default="RR@10", help="ir_measures name of the metric to test")
    cmp.add_argument("--k", type=POSITIVE, default=100, help="cut-off of the outcome breakdown (RR@k)")
    cmp.add_argument("--seed", type=SEED, default=0, help="seed of the randomisation test")
    cmp.add_argument("--permutations", type=POSITIVE, default=10000, help="sign flips of the randomisation test")
    cmp.add_argument("--rel-level", type=POSITIVE, default=1, help="lowest grade that counts as relevant")
    cmp.add_argument("--json", action="store_true", help="print the full result as one JSON object")

    prov = commands.add_parser("provenance", help="print what made a result (JSON): git commit and uncommitted "
                                                  "changes, the lock file's sha256, Python, package, Java and CUDA "
                                                  "versions; with --config also its hash, its weights' hashes and "
                                                  "its language models (as results/provenance.json records them)")
    prov.add_argument("--config", help="a config file: print its hash (compare with a manifest's config_hash)")

    reg = commands.add_parser("regress", help="check a results directory's headline cells against expected values "
                                              "(one pass/fail table; exit status 1 when a cell fails), refresh those "
                                              "values (--write-expected), or set a paper config's tables beside its "
                                              "published numbers (--reproduction)")
    reg.add_argument("--results", help="the results directory (default: results/, or the --config experiment's)")
    reg.add_argument("--expected", default="config/regression/demo.yaml", help="the expectations file")
    reg.add_argument("--write-expected", action="store_true",
                     help="replace the expected values by those in --results, keeping cells, tolerances and reasons "
                          "(after a deliberate change; never part of the workflow)")
    reg.add_argument("--reproduction", action="store_true",
                     help="the reproduction table of --config: its tables against its `reproduction` section's "
                          "published numbers (reproduced, published, difference, within tolerance)")
    reg.add_argument("--config", help="with --reproduction: the paper config (e.g. config/paper/study.yaml)")

    # Each analysis stage registers its own subcommands (`register(commands)` in posbias/<stage>/cli.py), the
    # module its config section names: a stage's command line sits in its folder, and no list here names it.
    from posbias.config.registry import stages
    for stage in stages().values():
        importlib.import_module(stage.commands).register(commands)
    from posbias import study_cli  # the study's model tables and seed pooling

    study_cli.register(commands)

    args = parser.parse_args(argv)
    # Combinations argparse cannot express, refused the way it refuses the rest (usage, exit status 2).
    if args.command == "compare" and len(args.run) != 2:
        cmp.error(f"--run must be given exactly twice (run A, run B), not {len(args.run)} times")
    if args.command == "fetch" and args.queryset and not args.qrels:
        fetch.error("--queryset also needs --qrels (where its judgments go)")
    if args.command == "rerank" and (args.checkpoint is None) == (args.model is None):
        rr.error("give either --checkpoint (a trained model) or --model (a zero-shot model of --config)")
    if args.command == "regress" and args.reproduction != bool(args.config):
        reg.error("--reproduction and --config go together (the config holds the published numbers)")
    if args.command == "regress" and args.reproduction and args.write_expected:
        reg.error("--write-expected refreshes --expected; it does not apply to --reproduction")

    from posbias.logs import job_log

    with job_log(None), _user_errors(args.command):
        check_reads(args)
        return _dispatch(args)


@contextlib.contextmanager
def _user_errors(command: str):
    """Input the user can fix (`InputError`: a malformed, missing or empty input, a bad config key) and the file
    system refusing a path (`OSError`) are one line on stderr and argparse's exit status 2, no traceback.
    Other exceptions are bugs and propagate with theirs."""
    try:
        yield
    except InputError as err:
        _fail(command, str(err))
    except OSError as err:
        path = err.filename2 or err.filename  # a rename's second name is the output, its first a hidden temporary
        _fail(command, f"{path}: {err.strerror}" if path and err.strerror else first_line(err))


def _fail(command: str, message: str):
    one_line = " ".join(part.strip() for part in message.splitlines())
    print(f"posbias {command}: error: {one_line}", file=sys.stderr)
    raise SystemExit(2) from None


def _warn(command: str, message: str) -> None:
    print(f"posbias {command}: warning: {message}", file=sys.stderr)


def _dispatch(args) -> int:
    if getattr(args, "handler", None):  # a stage's subcommand (posbias/<stage>/cli.py)
        args.handler(args)
        return 0
    if args.command == "generate":
        from posbias.steps.data import generate_synthetic

        generator = required_section(read_config(args.config), "generator", args.config)
        generate_synthetic(generator["settings"], generator["tokenizer"], args.out, args.passages)
    elif args.command == "farrelevant":
        from posbias.steps.data import build_farrelevant

        settings = required_section(read_config(args.config), "farrelevant", args.config)
        # as the workflow's build_farrelevant job: the training split too, when the config names one
        build_farrelevant(args.passages, args.queries, args.qrels,
                          {k: v for k, v in settings.items() if k not in ("tokenizer", "train_queryset")},
                          settings["tokenizer"], args.out, args.queryset, settings.get("train_queryset"))
    elif args.command == "farrelevant-source":
        from posbias.steps.farrelevant import build_farrelevant_source

        cfg = read_config_object(args.config)
        settings = required_section(cfg.data, "farrelevant", args.config)
        if cfg.farrelevant.source["kind"] == "synthetic":
            raise InputError(f"{args.config}: farrelevant.source is synthetic; use `posbias farrelevant`")
        # as the workflow's build_farrelevant_source job
        build_farrelevant_source(cfg.farrelevant.source, {k: v for k, v in settings.items()
                                                  if k not in ("tokenizer", "train_queryset", "source")},
                                 settings["tokenizer"], args.out, cfg.farrelevant.queryset, settings.get("train_queryset"))
    elif args.command == "fetch":
        from posbias.steps import data

        config = read_config(args.config)
        if args.collection:
            collection = named_block(config, "collections", args.collection, args.config, "--collection")
            data.fetch_documents(collection["documents"], args.out)
        else:
            queryset = named_block(config, "querysets", args.queryset, args.config, "--queryset")
            if "source" not in queryset:
                raise InputError(f"--queryset {args.queryset}: querysets.{args.queryset} in {args.config} has no "
                                 f"source to fetch (it is generated by the workflow)")
            data.fetch_queryset(queryset["source"], args.out, args.qrels)
    elif args.command == "truncate":
        from posbias.steps.data import truncate_documents

        truncate_documents(args.docs, args.out, args.tokenizer, args.max_tokens)
    elif args.command == "index":
        from posbias.steps.retrieval import index

        index(args.docs, args.index, args.threads, args.expansions)
    elif args.command == "dense-index":
        from posbias.steps.retrieval import dense_index

        spec = _hybrid_retriever(read_config(args.config), args.retriever, args.config)
        dense_index(args.docs, args.index, spec["encoder"], spec["faiss"], args.threads)
    elif args.command == "hybrid":
        from posbias.steps.retrieval import hybrid_retrieve

        config = read_config(args.config)
        spec = _hybrid_retriever(config, args.retriever, args.config)
        partner = config["retrievers"][spec["bm25"]]
        hybrid_retrieve(args.dense, args.index, args.queries, args.run, args.depth, spec["encoder"],
                        spec["weight"], {"k1": partner["k1"], "b": partner["b"]}, args.retriever, args.threads)
    elif args.command == "retrieve":
        from posbias.steps.retrieval import retrieve

        retrieve(args.index, args.queries, args.run, args.depth, args.k1, args.b, args.threads)
    elif args.command == "tokenize":
        from posbias.steps.data import tokenize_documents

        tokenize_documents(args.docs, args.out, args.tokenizer, args.cap, args.trust_remote_code, args.threads)
    elif args.command == "train":
        from posbias.config.sections.training import training_recipe
        from posbias.steps.training import train_model

        config = read_config(args.config)
        model = named_block(config, "models", args.model, args.config, "--model")
        if model.get("zero_shot"):
            raise InputError(f"--model {args.model}: models.{args.model} in {args.config} is zero-shot (never "
                             f"trained); rerank with it directly: posbias rerank --model {args.model}")
        recipe = training_recipe(config["training"], model.get("training"))  # as the workflow's train job gets it
        train_model(model, recipe, args.seed, args.tokens, args.queries, args.qrels, args.candidates, args.out,
                    args.threads, name=args.model)
    elif args.command == "rerank":
        _rerank(args)
    elif args.command == "evaluate":
        _evaluate(args)
    elif args.command == "compare":
        result = _compare(args)
        print(json.dumps(result, allow_nan=False) if args.json else _compare_summary(result))
    elif args.command == "regress":
        return _regress(args)
    elif args.command == "provenance":
        from posbias.provenance import main_environment

        config = read_config(args.config) if args.config else None
        print(json.dumps(main_environment(config), indent=1))
    return 0


def _regress(args) -> int:
    from posbias import regression

    if args.reproduction:
        return regression.run_reproduction(read_config_object(args.config), args.results, sys.stdout)
    results = args.results or "results"
    if args.write_expected:
        return regression.refresh_expected(args.expected, results, sys.stdout)
    return regression.run_check(args.expected, results, sys.stdout)


def _rerank(args) -> None:
    from posbias.rankers import catalog

    if args.model is None:
        from posbias.steps.training import rerank_candidates

        _needs(args, "--tokens", "a checkpoint reads the collection's token store")
        rerank_candidates(args.checkpoint, [args.tokens], [args.queries], [args.candidates], [args.run], args.tag,
                          _scoring(args), args.threads)
        return
    config = read_config(args.config)
    model = named_block(config, "models", args.model, args.config, "--model")
    if model["ranker"] in catalog.LISTWISE:
        from posbias.steps.listwise import rerank_listwise

        _needs(args, "--docs", f"models.{args.model} ranks document texts through a language model")
        cache = {**config.get("llm", {}).get("cache", {"dir": "cache/llm", "mode": "read_write"}),
                 **({"mode": args.cache_mode} if args.cache_mode else {})}
        llm = {k: v for k, v in config["llm"]["models"][model["args"]["llm"]].items() if k != "label"}
        rerank_listwise(model["args"], llm, cache, args.docs, args.queries, args.candidates, args.run, args.tag,
                        llm_name=model["args"]["llm"])
        return
    if not model.get("zero_shot"):
        raise InputError(f"--model {args.model}: models.{args.model} in {args.config} is trained, not "
                         f"zero-shot; rerank with one of its checkpoints (--checkpoint)")
    from posbias.steps.training import rerank_pretrained

    _needs(args, "--tokens", "it reads the collection's token store")
    rerank_pretrained(model, args.tokens, args.queries, args.candidates, [args.run], args.tag, _scoring(args),
                      args.threads)


def _needs(args, flag: str, why: str) -> None:
    if getattr(args, flag.lstrip("-")) is None:
        raise InputError(f"{flag}: required here ({why})")


def _scoring(args) -> dict:
    return {"batch_size": args.batch_size, "device": args.device, "precision": args.precision}


# --- evaluation --------------------------------------------------------------------------------------

def _judged_runs(command: str, qrels_path: str, run_paths: list[str], rel_level: int):
    """The qrels and each run, refusing an empty file and a run none of whose queries is judged (there would
    be nothing to evaluate), and warning when `rel_level` is above every grade (binary metrics all 0)."""
    from posbias.io import nonempty, read_qrels, read_run

    qrels = nonempty(read_qrels(qrels_path), qrels_path, "judgments")
    highest = max(grade for judged in qrels.values() for grade in judged.values())
    if rel_level > highest:
        _warn(command, f"--rel-level {rel_level} is above every grade in {qrels_path} (the highest is {highest}): "
                       f"no document counts as relevant, so RR, AP, P, R and other binary metrics are 0")
    runs = []
    for path in run_paths:
        run = nonempty(read_run(path), path, "results")
        if not any(qid in qrels for qid in run):
            raise InputError(f"{path}: none of its {len(run)} queries is judged in {qrels_path}")
        runs.append(run)
    return qrels, runs


def _evaluate(args) -> None:
    """`posbias evaluate`: mean of each metric over the queries both judged and in the run, as JSON."""
    from posbias.evaluation.metrics import parse_metrics, per_query
    from posbias.steps.evaluate import write_parquet

    metrics = args.metric or DEFAULT_METRICS
    parse_metrics(metrics)  # a misspelt metric fails before the files are read
    qrels, (run,) = _judged_runs("evaluate", args.qrels, [args.run], args.rel_level)
    frame = per_query(qrels, run, metrics, rel_level=args.rel_level)
    summary = frame.groupby("metric", sort=False)["value"].mean().to_dict()
    summary["n_queries"] = int(frame["qid"].nunique())
    if args.per_query:
        write_parquet(frame, args.per_query)
    print(json.dumps(summary))


def _compare(args) -> dict:
    """`posbias compare`: run A against run B on the queries evaluated for both."""
    from posbias.evaluation.metrics import parse_metrics, per_query
    from posbias.stats.outcomes import outcome_breakdown, rank_sum_p
    from posbias.stats.paired import compare_paired, json_number

    cutoff = f"RR@{args.k}"
    metrics = list(dict.fromkeys([args.metric, cutoff]))  # the metric may be RR@k itself
    parse_metrics(metrics)  # a misspelt metric fails before the files are read
    qrels, runs = _judged_runs("compare", args.qrels, args.run, args.rel_level)
    values = []
    for run in runs:
        frame = per_query(qrels, run, metrics, rel_level=args.rel_level)
        values.append({name: group.set_index("qid")["value"] for name, group in frame.groupby("metric")})
    a, b = values
    qids_a, qids_b = set(a[cutoff].index), set(b[cutoff].index)
    common = sorted(qids_a & qids_b)
    if not common:
        raise InputError(f"no judged query is in both {args.run[0]} and {args.run[1]}")
    n_only_a, n_only_b = len(qids_a - qids_b), len(qids_b - qids_a)
    if n_only_a or n_only_b:
        # A query a run did not answer at all is skipped (trec_eval without -c); pairing needs both.
        _warn("compare", f"{n_only_a} queries evaluated only for {args.run[0]} and {n_only_b} only for "
                         f"{args.run[1]}; comparing the {len(common)} evaluated for both")
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


def _compare_summary(result: dict) -> str:
    """The `compare` result (`_compare`) as three aligned tables; `--json` has every number."""
    import pandas as pd

    def num(value, digits: int = 4) -> str:
        return "n/a" if value is None else f"{value:.{digits}f}"  # None: undefined (nan) in the result

    def p(value, prefix: str = "") -> str:
        return "no test" if value is None else prefix + num(value)  # None: every pair tied: nothing to test

    def table(title: str, columns: dict, rows: list[str]) -> str:
        frame = pd.DataFrame(columns, index=rows)
        frame.columns.name = title  # printed in the header's first cell
        return frame.to_string()

    unpaired, outcomes, both = result["unpaired_queries"], result["outcomes"], result["outcomes"]["both"]
    left_out = (f"; left out: {unpaired['only_in_a']} evaluated only for A, {unpaired['only_in_b']} only for B"
                if unpaired["only_in_a"] or unpaired["only_in_b"] else "")
    low, high = result["ci95"]
    randomisation = result["randomisation"]
    outcome_names = {"neither": "neither", "only_a": "only A", "only_b": "only B", "both": "both"}
    return "\n".join([
        f"A: {result['run_a']}",
        f"B: {result['run_b']}",
        f"{result['n_queries']} queries evaluated for both{left_out}",
        "",
        table(result["metric"], {"A": [num(result["mean_a"])], "B": [num(result["mean_b"])],
                                 "A - B": [num(result["mean_difference"])],
                                 "95% CI of A - B": [f"[{num(low)}, {num(high)}]"],
                                 "effect size": [num(result["effect_size"], 2)]}, ["mean"]),
        "",
        table(f"paired test of {result['metric']}",
              {"p": [p(result["t_test"]["p"]), p(result["wilcoxon_signed_rank"]["p"]), p(randomisation["p"]),
                     p(result["wilcoxon_rank_sum"]["p"])]},
              ["t-test", "Wilcoxon signed-rank",
               f"randomisation ({randomisation['permutations']} sign flips, seed {randomisation['seed']})",
               "Wilcoxon rank-sum (unpaired)"]),
        "",
        table(f"relevant in top {outcomes['k']}",
              {"queries": [outcomes["counts"][key] for key in outcome_names],
               "share": [f"{100 * (outcomes['shares'][key] or 0):.1f}%" for key in outcome_names]},
              list(outcome_names.values())),
        f"only A against only B (binomial test): {p(outcomes['binomial_p'], 'p ')}",
        f"where both find one, mean rank of the first relevant document: A {num(both['esl_a'], 2)}, "
        f"B {num(both['esl_b'], 2)} "
        f"(Wilcoxon {p(both['esl_wilcoxon_p'], 'p ')}, t-test {p(both['esl_t_p'], 'p ')})",
    ])


if __name__ == "__main__":
    sys.exit(main())
