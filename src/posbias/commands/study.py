"""The long-document study's report by hand (rules/stats.smk, rules/report.smk): seed pooling, every model
table, the outcome and first-stage tables, Tables 9-11 and their statistics, and the FarRelevant and efficiency
figures, each with the arguments the workflow's job gets (`CFG.tables`: `params`, `outcome_params`,
`first_stage_params`, `table11_params`, `dataset_stats_params`, `farrelevant_figure_params`, `efficiency_runs`).

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

from pathlib import Path

from posbias.command_flags import add_stage, read_config_object, reads
from posbias.errors import InputError

TABLE_FORMATS = ("tex", "csv", "md", "html")
FIGURE_FORMATS = ("png", "pdf")


def register(commands) -> None:
    """Add `posbias study` and its subcommands to the command line's subparsers."""
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
    reads(datasets, "--stats", "directory", default="results/stats",
          help="the directory of collections/<name>.json and querysets/<name>.json (default: results/stats)")
    datasets.add_argument("--out", required=True, help="directory of table9.* and table10.*")

    parameters = step("table11", table11, help="Table 11: each ranker's parameters (table11.{tex,csv,md,html})")
    reads(parameters, "--models", "directory", default="results/models",
          help="the checkpoints' directory, <model>/seed<seed>/ (default: results/models)")
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
    reads(efficiency, "--runs", "directory", default="results/runs",
          help="the runs' directory, <queryset>/<model>/seed<seed>.run.json (default: results/runs)")
    efficiency.add_argument("--out", required=True, help="directory of efficiency.{png,pdf}")


def outputs_of(out: str, name: str, formats=TABLE_FORMATS) -> dict[str, str]:
    return {ext: str(Path(out) / f"{name}.{ext}") for ext in formats}


def _table_of(config, path: str, name: str) -> dict:
    if not config.tables.get(name):
        raise InputError(f"{path}: no tables.{name}")
    return config.tables[name]


def combine_seeds(args) -> None:
    from posbias.steps.evaluate import combine_seeds as combine

    combine(args.values, args.per_seed, args.averaged)


def model_table(args) -> None:
    from posbias.steps.report import model_table as write_model_table, table4

    config = read_config_object(args.config)
    known = ["table4", *config.tables.of_layout()] if "table4" in config.tables else config.tables.of_layout()
    if args.name not in known:
        raise InputError(f"--name {args.name}: not a model table of {args.config} (its model tables: "
                         f"{', '.join(known) or 'none'})")
    outputs = outputs_of(args.out, args.name)
    job = config.tables.params(args.name)
    common = (job["spec"], job["models"], job["external"], job["querysets"], job["n_seeds"], job["statistics"])
    if args.name == "table4":
        if config.tables.querysets("table4", setting="fine-tuned") and not args.finetuned:
            raise InputError(f"--finetuned: table4 of {args.config} has a fine-tuned column; give its query sets' "
                             f"seed_averaged.parquet")
        table4(args.averaged, args.finetuned or [], *common, outputs)
    else:
        if args.finetuned:
            raise InputError(f"--finetuned: only table4 reads fine-tuned values, not {args.name}")
        write_model_table(args.averaged, *common, f"tab:{args.name}", outputs)


def outcomes(args) -> None:
    from posbias.steps.report import outcome_table

    config = read_config_object(args.config)
    _table_of(config, args.config, "outcomes")
    job = config.tables.outcome_params()
    if not len(args.per_seed) == len(args.qrels) == len(job["querysets"]):
        raise InputError(f"--per-seed and --qrels: one of each per query set of tables.outcomes.querysets "
                         f"({', '.join(job['querysets'])}), in that order")
    outcome_table(args.per_seed, args.qrels, job["querysets"], job["rel_levels"], job["alphas"], job["spec"],
                  job["models"], outputs_of(args.out, "outcomes"))


def first_stage(args) -> None:
    from posbias.steps.report import first_stage_table

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
    from posbias.steps.report import collection_statistics

    job = _dataset_stats(args)
    if args.collection not in job["collections"]:
        raise InputError(f"--collection {args.collection}: not the collection of a query set of "
                         f"tables.dataset_stats.querysets in {args.config} ({', '.join(job['collections'])})")
    collection_statistics(args.docs, args.tokens, job["tokenizer"], job["sample"], args.out)


def queryset_stats(args) -> None:
    from posbias.steps.report import queryset_statistics

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
    from posbias.steps.report import dataset_tables as write_dataset_tables

    job, stats = _dataset_stats(args), Path(args.stats)
    made_by = "posbias study collection-stats and queryset-stats"
    collections = _existing([stats / "collections" / f"{c}.json" for c in job["collections"]], "--stats",
                            args.stats, made_by)
    querysets = _existing([stats / "querysets" / f"{q}.json" for q in job["querysets"]], "--stats", args.stats,
                          made_by)
    write_dataset_tables(dict(zip(job["collections"], collections)), dict(zip(job["querysets"], querysets)),
                         job["tokenizer"], outputs_of(args.out, "table9"), outputs_of(args.out, "table10"))


def table11(args) -> None:
    from posbias.steps.report import parameter_table

    config = read_config_object(args.config)
    _table_of(config, args.config, "table11")
    job, models = config.tables.table11_params(), Path(args.models)
    checkpoints = _existing([models / m / f"seed{s}" for m, s in zip(job["trained"], job["seeds"])], "--models",
                            args.models, "posbias train")
    parameter_table(dict(zip(job["trained"], checkpoints)), job["labels"], outputs_of(args.out, "table11"),
                    zero_shot=job["zero_shot"])


def farrelevant_figure(args) -> None:
    from posbias.steps.report import farrelevant_figure as draw

    config = read_config_object(args.config)
    _table_of(config, args.config, "table4")
    job = config.tables.farrelevant_figure_params()
    draw(args.per_seed, job["models"], job["labels"], job["metric"],
         list(outputs_of(args.out, "farrelevant", FIGURE_FORMATS).values()), finetuned=args.finetuned)


def efficiency_figure(args) -> None:
    from posbias.steps.report import efficiency_figure as draw

    config = read_config_object(args.config)
    runs = config.tables.efficiency_runs()
    if not runs:
        raise InputError(f"{args.config}: no run to time (the efficiency figure shows Table 1's models on its "
                         f"query sets that are reranked directly)")
    infos = _existing([Path(args.runs) / qs / m / f"seed{s}.run.json" for m, s, qs in runs], "--runs", args.runs,
                      "posbias rerank")
    draw(args.table, infos, [list(run) for run in runs], config.tables.params("table1")["models"],
         list(outputs_of(args.out, "efficiency", FIGURE_FORMATS).values()))
