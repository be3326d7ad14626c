"""Evaluation and the study's report by hand (rules/evaluation.smk).

A run's metrics (trec_eval semantics, through ir_measures), two runs compared query by query, and a pooled query set's
values.

    posbias evaluate --qrels qrels.txt --run out.run --metric RR@10 --metric nDCG@10
    posbias evaluate --config config.yaml --queryset dev --system maxp --seed 1 --qrels ... --run ... \
        --per-query results/eval/dev/maxp/seed1.parquet          (the workflow's evaluate job)
    posbias compare --qrels qrels.txt --run a.run --run b.run --metric RR@10 [--json]
    posbias pool --config config.yaml --queryset trec_dl --values dl19.parquet dl20.parquet --out pooled.parquet

The report (`posbias study`): seed pooling, every model table, the outcome and first-stage tables, Tables 9-11 and
their statistics, and the FarRelevant and efficiency figures, each with the arguments the workflow's job gets
(`CFG.tables`: `params`, `outcome_params`, `first_stage_params`, `table11_params`, `dataset_stats_params`,
`farrelevant_figure_params`, `efficiency_runs`).

    posbias study combine-seeds --values a.parquet b.parquet ... --per-seed per_seed.parquet \
        --averaged seed_averaged.parquet
    posbias study table --config config.yaml --name table1 --averaged results/eval/dev/seed_averaged.parquet ... \
        --out results/
    posbias study table --config config.yaml --name table4 --averaged ... --finetuned ... --out results/
    posbias study outcomes --config config.yaml --per-seed results/eval-cutoff/k5/dev/per_seed.parquet ... \
        --qrels dev.txt ... --out results/
    posbias study first-stage --config config.yaml --values results/eval-first-stage/bm25/dev/top100.parquet ... \
        --out results/
    posbias study collection-stats --config config.yaml --collection synthetic --docs docs.jsonl \
        --out results/stats/collections/synthetic.json          (or --tokens <token store>)
    posbias study queryset-stats --config config.yaml --queryset dev --queries ... --qrels ... \
        --out results/stats/querysets/dev.json
    posbias study dataset-tables --config config.yaml --stats results/stats --out results/
    posbias study table11 --config config.yaml --models results/models --out results/
    posbias study farrelevant-figure --config config.yaml --per-seed results/eval/farrelevant/per_seed.parquet \
        [--finetuned results/eval-finetuned/farrelevant/per_seed.parquet] --out results/figures
    posbias study efficiency-figure --config config.yaml --table results/table1.csv --runs results/runs \
        --out results/figures

A model table reads the seed-averaged values of the query sets its columns show (Table 4 also the fine-tuned
ones); the outcome table each of its query sets' per-seed values at its cut-off and qrels, in the order of
`tables.outcomes.querysets`; each writes NAME.{tex,csv,md,html} into --out, a figure NAME.{png,pdf}.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from posbias.command_flags import POSITIVE, SEED, add_command, add_stage, named_block, read_config_object, reads
from posbias.evaluation import paths
from posbias.rerank import paths as rerank_paths
from posbias.training import paths as training_paths
from posbias.errors import InputError

DEFAULT_METRICS = ["RR@10", "nDCG@10"]
TABLE_FORMATS = ("tex", "csv", "md", "html")
FIGURE_FORMATS = ("png", "pdf")


def register(commands) -> None:
    ev = add_command(commands, "evaluate", evaluate, usage_check=_evaluate_usage,
                     help="evaluate a run (trec_eval semantics); prints JSON; an empty qrels or run, or a run with "
                          "no judged query, is an error")
    reads(ev, "--qrels", required=True)
    reads(ev, "--run", required=True)
    ev.add_argument("--metric", action="append", default=None,
                    help=f"ir_measures name, repeatable (default: the --config query set's metrics, else "
                         f"{' and '.join(DEFAULT_METRICS)})")
    ev.add_argument("--per-query", help="also write per-query values to this Parquet file")
    ev.add_argument("--rel-level", type=POSITIVE, default=None,
                    help="lowest grade that counts as relevant (trec_eval -l; default: the --config query set's, "
                         "else 1); nDCG keeps graded gains; a level above every grade in the qrels is warned about")
    ev.add_argument("--config", help="with --queryset: take its metrics and relevance level from the config")
    ev.add_argument("--queryset", help="the query set the run answers (a key of --config's querysets)")
    ev.add_argument("--system", help="label the per-query rows with this system (a model, retriever, random, "
                                     "...) and --seed and --queryset, as the workflow's evaluate job does")
    ev.add_argument("--seed", type=SEED, default=0, help="the run's seed, with --system")

    cmp = add_command(commands, "compare", compare, usage_check=_compare_usage,
                      help="compare two runs query by query (paired tests, outcome breakdown); prints a summary "
                           "table, or every number as JSON with --json; an empty qrels or run, or a run with no "
                           "judged query, is an error")
    reads(cmp, "--qrels", required=True)
    reads(cmp, "--run", action="append", required=True, help="given twice: run A, then run B")
    cmp.add_argument("--metric", default="RR@10", help="ir_measures name of the metric to test")
    cmp.add_argument("--k", type=POSITIVE, default=100, help="cut-off of the outcome breakdown (RR@k)")
    cmp.add_argument("--seed", type=SEED, default=0, help="seed of the randomisation test")
    cmp.add_argument("--permutations", type=POSITIVE, default=10000, help="sign flips of the randomisation test")
    cmp.add_argument("--rel-level", type=POSITIVE, default=1, help="lowest grade that counts as relevant")
    cmp.add_argument("--json", action="store_true", help="print the full result as one JSON object")

    pool_ = add_command(commands, "pool", pool,
                        help="a pooled query set's per-query values of one system: its members' stacked, each query "
                             "id prefixed with its member's name (the workflow's pool_evaluations job)")
    pool_.add_argument("--config", default="config.yaml")
    pool_.add_argument("--queryset", required=True, help="a pooled query set of --config (querysets.<name>.pool)")
    reads(pool_, "--values", nargs="+", required=True,
          help="each member's per-query values of the system (posbias evaluate --per-query), in the pool's order")
    pool_.add_argument("--out", required=True, help="the pooled values (Parquet)")

    _register_study(commands)


def warn(command: str, message: str) -> None:
    print(f"posbias {command}: warning: {message}", file=sys.stderr)


def _evaluate_usage(args) -> str | None:
    if (args.config or args.system) and not args.queryset:
        return "--config and --system need --queryset (the query set the run answers)"
    if args.system and not args.per_query:
        return "--system labels the rows of --per-query; give it too"
    if args.queryset and not (args.config or args.system):
        return "--queryset goes with --config (its metrics) or --system (the rows' labels)"
    return None


def _compare_usage(args) -> str | None:
    if len(args.run) != 2:
        return f"--run must be given exactly twice (run A, run B), not {len(args.run)} times"
    return None


def _judged_runs(command: str, qrels_path: str, run_paths: list[str], rel_level: int):
    """The qrels and each run, refusing an empty file and a run none of whose queries is judged (there would
    be nothing to evaluate), and warning when `rel_level` is above every grade (binary metrics all 0)."""
    from posbias.io import nonempty, read_qrels, read_run

    qrels = nonempty(read_qrels(qrels_path), qrels_path, "judgments")
    highest = max(grade for judged in qrels.values() for grade in judged.values())
    if rel_level > highest:
        warn(command, f"--rel-level {rel_level} is above every grade in {qrels_path} (the highest is {highest}): "
                       f"no document counts as relevant, so RR, AP, P, R and other binary metrics are 0")
    runs = []
    for path in run_paths:
        run = nonempty(read_run(path), path, "results")
        if not any(qid in qrels for qid in run):
            raise InputError(f"{path}: none of its {len(run)} queries is judged in {qrels_path}")
        runs.append(run)
    return qrels, runs


def evaluate(args) -> None:
    """`posbias evaluate`: mean of each metric over the queries both judged and in the run, as JSON."""
    from posbias.evaluation.metrics import parse_metrics, per_query
    from posbias.evaluation.steps import write_parquet

    metrics, rel_level = args.metric or DEFAULT_METRICS, args.rel_level or 1
    if args.config:
        config = read_config_object(args.config)
        named_block(config.data, "querysets", args.queryset, args.config, "--queryset")
        job = config.querysets.evaluation_params(args.queryset)  # what the workflow's evaluate job gets
        metrics, rel_level = args.metric or job["metrics"], args.rel_level or job["rel_level"]
    parse_metrics(metrics)  # a misspelt metric fails before the files are read
    qrels, (run,) = _judged_runs("evaluate", args.qrels, [args.run], rel_level)
    frame = per_query(qrels, run, metrics, rel_level=rel_level)
    summary = frame.groupby("metric", sort=False)["value"].mean().to_dict()
    summary["n_queries"] = int(frame["qid"].nunique())
    if args.per_query:
        if args.system:  # the evaluate job's labels (posbias.evaluation.steps.evaluate_run)
            frame = frame.assign(system=args.system, seed=args.seed, queryset=args.queryset)
        write_parquet(frame, args.per_query)
    print(json.dumps(summary))


def compare(args) -> None:
    result = _compare(args)
    print(json.dumps(result, allow_nan=False) if args.json else _compare_summary(result))


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
        warn("compare", f"{n_only_a} queries evaluated only for {args.run[0]} and {n_only_b} only for "
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




def pool(args) -> None:
    from posbias.evaluation.steps import pool_values

    config = read_config_object(args.config)
    named_block(config.data, "querysets", args.queryset, args.config, "--queryset")
    spec = config.querysets[args.queryset]
    if not spec.pooled:
        raise InputError(f"--queryset {args.queryset}: querysets.{args.queryset} in {args.config} is not pooled")
    if len(args.values) != len(spec.pool):
        raise InputError(f"--values: one file per member of the pool ({', '.join(spec.pool)}), in that order; "
                         f"got {len(args.values)}")
    pool_values(args.values, list(spec.pool), list(spec.metrics), args.queryset, args.out)


def _register_study(commands) -> None:
    """`posbias study` and its subcommands."""
    steps = add_stage(commands, "study", handler=None,
                      help="the long-document study's report by hand: seed pooling, tables, statistics, figures")

    def step(name: str, handler, help: str, config: bool = True):
        parser = steps.add_parser(name, help=help)
        parser.set_defaults(handler=handler)
        if config:
            parser.add_argument("--config", default="config.yaml")
        return parser

    combine = step("combine-seeds", combine_seeds, config=False,
                   help="stack a query set's per-query values of every system and seed (posbias evaluate "
                        "--per-query), then average over seeds")
    reads(combine, "--values", nargs="+", required=True, help="per-query Parquet files, one per run")
    combine.add_argument("--per-seed", required=True, help="where the stacked values go (Parquet)")
    combine.add_argument("--averaged", required=True, help="where the seed-averaged values go (Parquet)")

    table = step("table", model_table, help="a model table of the config (tables.<name>: any layout, or table4) as "
                                            "tex, csv, md and html")
    table.add_argument("--name", required=True, help="the table's key under tables:")
    reads(table, "--averaged", nargs="+", required=True,
          help="the seed_averaged.parquet of each query set the table shows (posbias study combine-seeds)")
    reads(table, "--finetuned", nargs="+", help="table4: the fine-tuned query sets' seed_averaged.parquet")
    table.add_argument("--out", required=True, help="directory of NAME.{tex,csv,md,html}")

    outcomes_ = step("outcomes", outcomes, help="tables.outcomes: the outcome breakdown of each model against its "
                                                "baseline (outcomes.{tex,csv,md,html})")
    reads(outcomes_, "--per-seed", nargs="+", required=True,
          help="each outcome query set's per_seed.parquet at the table's cut-off (rule combine_cutoff_seeds)")
    reads(outcomes_, "--qrels", nargs="+", required=True, help="each outcome query set's qrels, in the same order")
    outcomes_.add_argument("--out", required=True, help="directory of outcomes.{tex,csv,md,html}")

    first = step("first-stage", first_stage, help="tables.first_stage: the retrievers on their own "
                                                  "(first_stage.{tex,csv,md,html})")
    reads(first, "--values", nargs="+", required=True,
          help="per-query values of each retriever and query set (rule evaluate_first_stage)")
    first.add_argument("--out", required=True, help="directory of first_stage.{tex,csv,md,html}")

    collection = step("collection-stats", collection_stats,
                      help="tables.dataset_stats: one collection's document count and length (a JSON file)")
    collection.add_argument("--collection", required=True, help="the collection's name (Table 9's row)")
    source = collection.add_mutually_exclusive_group(required=True)
    reads(source, "--docs", help="its documents (JSONL), tokenised with the table's tokenizer")
    reads(source, "--tokens", "directory", help="or its token store of that tokenizer, which holds every length")
    collection.add_argument("--out", required=True, help="the statistics (JSON)")

    queryset = step("queryset-stats", queryset_stats,
                    help="tables.dataset_stats: one query set's query count, length and judgments (a JSON file)")
    queryset.add_argument("--queryset", required=True, help="a query set of tables.dataset_stats.querysets")
    reads(queryset, "--queries", required=True)
    reads(queryset, "--qrels", required=True)
    queryset.add_argument("--out", required=True, help="the statistics (JSON)")

    datasets = step("dataset-tables", dataset_tables,
                    help="Tables 9 and 10 (documents, queries) from the statistics files")
    reads(datasets, "--stats", "directory", default=paths.STATISTICS,
          help=f"the directory of collections/<name>.json and querysets/<name>.json (default: {paths.STATISTICS})")
    datasets.add_argument("--out", required=True, help="directory of table9.* and table10.*")

    parameters = step("table11", table11, help="Table 11: each ranker's parameters (table11.{tex,csv,md,html})")
    reads(parameters, "--models", "directory", default=training_paths.MODELS,
          help=f"the checkpoints' directory, <model>/seed<seed>/ (default: {training_paths.MODELS})")
    parameters.add_argument("--out", required=True, help="directory of table11.*")

    far = step("farrelevant-figure", farrelevant_figure,
               help="the FarRelevant figure (the study's Figure 2): Table 4's models, zero-shot and fine-tuned")
    reads(far, "--per-seed", required=True, help="the FarRelevant query set's per_seed.parquet")
    reads(far, "--finetuned", help="its fine-tuned runs' per_seed.parquet, for the fine-tuned bars")
    far.add_argument("--out", required=True, help="directory of farrelevant.{png,pdf}")

    efficiency = step("efficiency-figure", efficiency_figure,
                      help="the efficiency figure (the study's Figure 3): Table 1's rankers' scoring time against "
                           "their gain")
    reads(efficiency, "--table", required=True, help="Table 1's CSV (posbias study table --name table1)")
    reads(efficiency, "--runs", "directory", default=rerank_paths.RUNS,
          help=f"the runs' directory, <queryset>/<model>/seed<seed>.run.json (default: {rerank_paths.RUNS})")
    efficiency.add_argument("--out", required=True, help="directory of efficiency.{png,pdf}")


def outputs_of(out: str, name: str, formats=TABLE_FORMATS) -> dict[str, str]:
    return {ext: str(Path(out) / f"{name}.{ext}") for ext in formats}


def _table_of(config, path: str, name: str) -> dict:
    if not config.tables.get(name):
        raise InputError(f"{path}: no tables.{name}")
    return config.tables[name]


def combine_seeds(args) -> None:
    from posbias.evaluation.steps import combine_seeds as combine

    combine(args.values, args.per_seed, args.averaged)


def model_table(args) -> None:
    from posbias.evaluation.jobs import TableJob
    from posbias.evaluation.report import TABLE4_LABEL, model_table as write_model_table, table4

    config = read_config_object(args.config)
    known = ["table4", *config.tables.of_layout()] if "table4" in config.tables else config.tables.of_layout()
    if args.name not in known:
        raise InputError(f"--name {args.name}: not a model table of {args.config} (its model tables: "
                         f"{', '.join(known) or 'none'})")
    outputs = outputs_of(args.out, args.name)
    params = config.tables.params(args.name)
    if args.name == "table4":
        if config.tables.querysets("table4", setting="fine-tuned") and not args.finetuned:
            raise InputError(f"--finetuned: table4 of {args.config} has a fine-tuned column; give its query sets' "
                             f"seed_averaged.parquet")
        table4(TableJob.from_params(args.averaged, params, TABLE4_LABEL, outputs, args.finetuned or []))
    else:
        if args.finetuned:
            raise InputError(f"--finetuned: only table4 reads fine-tuned values, not {args.name}")
        write_model_table(TableJob.from_params(args.averaged, params, f"tab:{args.name}", outputs))


def outcomes(args) -> None:
    from posbias.evaluation.report import outcome_table

    config = read_config_object(args.config)
    _table_of(config, args.config, "outcomes")
    job = config.tables.outcome_params()
    if not len(args.per_seed) == len(args.qrels) == len(job["querysets"]):
        raise InputError(f"--per-seed and --qrels: one of each per query set of tables.outcomes.querysets "
                         f"({', '.join(job['querysets'])}), in that order")
    outcome_table(args.per_seed, args.qrels, job["querysets"], job["rel_levels"], job["alphas"], job["spec"],
                  job["models"], outputs_of(args.out, "outcomes"))


def first_stage(args) -> None:
    from posbias.evaluation.report import first_stage_table

    config = read_config_object(args.config)
    _table_of(config, args.config, "first_stage")
    job = config.tables.first_stage_params()
    first_stage_table(args.values, job["spec"], job["querysets"], job["statistics"],
                      outputs_of(args.out, "first_stage"))


def _dataset_stats(args):
    config = read_config_object(args.config)
    _table_of(config, args.config, "dataset_stats")
    return config.tables.dataset_stats_params()


def collection_stats(args) -> None:
    from posbias.evaluation.steps import collection_statistics

    job = _dataset_stats(args)
    if args.collection not in job["collections"]:
        raise InputError(f"--collection {args.collection}: not the collection of a query set of "
                         f"tables.dataset_stats.querysets in {args.config} ({', '.join(job['collections'])})")
    collection_statistics(args.docs, args.tokens, job["tokenizer"], job["sample"], args.out)


def queryset_stats(args) -> None:
    from posbias.evaluation.steps import queryset_statistics

    job = _dataset_stats(args)
    if args.queryset not in job["querysets"]:
        raise InputError(f"--queryset {args.queryset}: not in tables.dataset_stats.querysets of {args.config} "
                         f"({', '.join(job['querysets'])})")
    queryset_statistics(args.queries, args.qrels, job["tokenizer"], job["rel_levels"][args.queryset], args.out)


def _existing(paths: list[Path], flag: str, root: str, made_by: str) -> list[str]:
    missing = [str(p.relative_to(root)) for p in paths if not p.exists()]
    if missing:
        raise InputError(f"{flag} {root}: lacks {', '.join(missing)} ({made_by})")
    return [str(p) for p in paths]


def dataset_tables(args) -> None:
    from posbias.evaluation.report import dataset_tables as write_dataset_tables

    job, stats = _dataset_stats(args), Path(args.stats)
    made_by = "posbias study collection-stats and queryset-stats"
    collections = _existing([stats / "collections" / f"{c}.json" for c in job["collections"]], "--stats",
                            args.stats, made_by)
    querysets = _existing([stats / "querysets" / f"{q}.json" for q in job["querysets"]], "--stats", args.stats,
                          made_by)
    write_dataset_tables(dict(zip(job["collections"], collections)), dict(zip(job["querysets"], querysets)),
                         job["tokenizer"], outputs_of(args.out, "table9"), outputs_of(args.out, "table10"))


def table11(args) -> None:
    from posbias.evaluation.report import parameter_table

    config = read_config_object(args.config)
    _table_of(config, args.config, "table11")
    job, models = config.tables.table11_params(), Path(args.models)
    checkpoints = _existing([models / m / f"seed{s}" for m, s in zip(job["trained"], job["seeds"])], "--models",
                            args.models, "posbias train")
    parameter_table(dict(zip(job["trained"], checkpoints)), job["labels"], outputs_of(args.out, "table11"),
                    zero_shot=job["zero_shot"])


def farrelevant_figure(args) -> None:
    from posbias.evaluation.report import farrelevant_figure as draw

    config = read_config_object(args.config)
    _table_of(config, args.config, "table4")
    job = config.tables.farrelevant_figure_params()
    draw(args.per_seed, job["models"], job["labels"], job["metric"],
         list(outputs_of(args.out, "farrelevant", FIGURE_FORMATS).values()), finetuned=args.finetuned)


def efficiency_figure(args) -> None:
    from posbias.evaluation.report import efficiency_figure as draw

    config = read_config_object(args.config)
    runs = config.tables.efficiency_runs()
    if not runs:
        raise InputError(f"{args.config}: no run to time (the efficiency figure shows Table 1's models on its "
                         f"query sets that are reranked directly)")
    infos = _existing([Path(args.runs) / qs / m / f"seed{s}.run.json" for m, s, qs in runs], "--runs", args.runs,
                      "posbias rerank")
    draw(args.table, infos, [list(run) for run in runs], config.tables.params("table1")["models"],
         list(outputs_of(args.out, "efficiency", FIGURE_FORMATS).values()))
