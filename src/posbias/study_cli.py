"""`posbias study combine-seeds|table|outcomes|first-stage`: the long-document study's seed pooling, model
tables, outcome table and first-stage table by hand, with the arguments the workflow's jobs get (`CFG.tables`:
`params`, `outcome_params`, `first_stage_params`; the rules in rules/report.smk and rules/evaluate.smk).

    posbias study combine-seeds --values a.parquet b.parquet ... --per-seed per_seed.parquet \
        --averaged seed_averaged.parquet
    posbias study table --config config.yaml --name table1 --averaged results/eval/dev/seed_averaged.parquet ... \
        --out results/
    posbias study table --config config.yaml --name table4 --averaged ... --finetuned ... --out results/

    posbias study outcomes --config config.yaml --per-seed results/eval-cutoff/k5/dev/per_seed.parquet ... \
        --qrels dev.txt ... --out results/
    posbias study first-stage --config config.yaml --values results/eval-first-stage/bm25/dev/top100.parquet ... \
        --out results/

A model table reads the seed-averaged values of the query sets its columns show (Table 4 also the fine-tuned
ones); the outcome table each of its query sets' per-seed values at its cut-off and qrels, in the order of
`tables.outcomes.querysets`; each writes NAME.{tex,csv,md,html} into --out.
"""

from __future__ import annotations

from pathlib import Path

from posbias.command_flags import read_config_object, reads
from posbias.errors import InputError

TABLE_FORMATS = ("tex", "csv", "md", "html")


def register(commands) -> None:
    """Add `posbias study` and its subcommands to the command line's subparsers."""
    study = commands.add_parser("study", help="the long-document study's model tables and seed pooling by hand")
    study.set_defaults(handler=run_command)
    steps = study.add_subparsers(dest="study_command", required=True)
    combine = steps.add_parser("combine-seeds", help="stack a query set's per-query values of every system and seed "
                                                     "(posbias evaluate --per-query), then average over seeds")
    reads(combine, "--values", nargs="+", required=True, help="per-query Parquet files, one per run")
    combine.add_argument("--per-seed", required=True, help="where the stacked values go (Parquet)")
    combine.add_argument("--averaged", required=True, help="where the seed-averaged values go (Parquet)")
    table = steps.add_parser("table", help="a model table of the config (tables.<name>: any layout, or table4) as "
                                           "tex, csv, md and html")
    table.add_argument("--config", default="config.yaml")
    table.add_argument("--name", required=True, help="the table's key under tables:")
    reads(table, "--averaged", nargs="+", required=True,
          help="the seed_averaged.parquet of each query set the table shows (posbias study combine-seeds)")
    reads(table, "--finetuned", nargs="+", help="table4: the fine-tuned query sets' seed_averaged.parquet")
    table.add_argument("--out", required=True, help="directory of NAME.{tex,csv,md,html}")
    outcomes = steps.add_parser("outcomes", help="tables.outcomes: the outcome breakdown of each model against its "
                                                 "baseline (outcomes.{tex,csv,md,html})")
    outcomes.add_argument("--config", default="config.yaml")
    reads(outcomes, "--per-seed", nargs="+", required=True,
          help="each outcome query set's per_seed.parquet at the table's cut-off (rule combine_cutoff_seeds)")
    reads(outcomes, "--qrels", nargs="+", required=True, help="each outcome query set's qrels, in the same order")
    outcomes.add_argument("--out", required=True, help="directory of outcomes.{tex,csv,md,html}")
    first = steps.add_parser("first-stage", help="tables.first_stage: the retrievers on their own "
                                                 "(first_stage.{tex,csv,md,html})")
    first.add_argument("--config", default="config.yaml")
    reads(first, "--values", nargs="+", required=True,
          help="per-query values of each retriever and query set (rule evaluate_first_stage)")
    first.add_argument("--out", required=True, help="directory of first_stage.{tex,csv,md,html}")


def outputs_of(out: str, name: str) -> dict[str, str]:
    return {ext: str(Path(out) / f"{name}.{ext}") for ext in TABLE_FORMATS}


def run_command(args) -> None:
    if args.study_command == "combine-seeds":
        from posbias.steps.evaluate import combine_seeds

        combine_seeds(args.values, args.per_seed, args.averaged)
        return
    from posbias.steps.report import first_stage_table, model_table, outcome_table, table4

    config = read_config_object(args.config)
    if args.study_command == "outcomes":
        if not config.tables.get("outcomes"):
            raise InputError(f"{args.config}: no tables.outcomes")
        job = config.tables.outcome_params()
        if not len(args.per_seed) == len(args.qrels) == len(job["querysets"]):
            raise InputError(f"--per-seed and --qrels: one of each per query set of tables.outcomes.querysets "
                             f"({', '.join(job['querysets'])}), in that order")
        outcome_table(args.per_seed, args.qrels, job["querysets"], job["rel_levels"], job["alphas"], job["spec"],
                      job["models"], outputs_of(args.out, "outcomes"))
        return
    if args.study_command == "first-stage":
        if not config.tables.get("first_stage"):
            raise InputError(f"{args.config}: no tables.first_stage")
        job = config.tables.first_stage_params()
        first_stage_table(args.values, job["spec"], job["querysets"], job["statistics"],
                          outputs_of(args.out, "first_stage"))
        return
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
        model_table(args.averaged, *common, f"tab:{args.name}", outputs)
