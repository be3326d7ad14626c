"""`posbias sweep build|report|breakdown`: the position sweep's and the position breakdown's steps, each alone
(rules/sweep.smk runs them with the same arguments, from `CFG.sweep`)."""

from __future__ import annotations

from pathlib import Path

from posbias.command_flags import add_stage, read_config_object, reads
from posbias.errors import InputError


def register(commands) -> None:
    """Add `posbias sweep` and its subcommands to the command line's subparsers."""
    steps = add_stage(commands, "sweep", handler=run_command,
                      help="the position sweep: build its collection, report MRR by position; "
                           "and the position breakdown of a query set")
    build = steps.add_parser("build", help="the sweep collection (docs.jsonl, queries.tsv, qrels.txt, positions.tsv, "
                                           "candidates.run) from the source query set's files")
    build.add_argument("--config", default="config.yaml")
    for flag, what in (("--queries", "the source query set's queries"), ("--qrels", "its judgments"),
                       ("--docs", "its documents as the source wrote them (JSONL)"),
                       ("--positions", "its true positions (qid, start token, ...)"),
                       ("--candidates", "its candidate run"), ("--passages", "the passage collection (JSONL)"),
                       ("--passage-qrels", "the passages' judgments")):
        reads(build, flag, required=True, help=what)
    build.add_argument("--out", required=True, help="directory of the sweep collection's files")
    report = steps.add_parser("report", help="the sweep table and its position-sensitivity table (tex, csv, md, html) "
                                             "and figure (png, pdf)")
    report.add_argument("--config", default="config.yaml")
    reads(report, "--per-seed", required=True, help="the sweep query set's per_seed.parquet (rule combine_seeds)")
    reads(report, "--positions", required=True, help="the sweep query set's positions (posbias sweep build)")
    reads(report, "--candidates", required=True, help="the sweep query set's candidates (posbias sweep build)")
    report.add_argument("--out", required=True, help="directory of sweep.*, sweep_sensitivity.* and figures/")
    breakdown = steps.add_parser("breakdown", help="tables.position_breakdown: the metric per model by answer "
                                                   "position (tex, csv, md, html)")
    breakdown.add_argument("--config", default="config.yaml")
    reads(breakdown, "--averaged", required=True, help="the query set's seed_averaged.parquet (rule combine_seeds)")
    reads(breakdown, "--positions", required=True, help="the query set's positions file")
    breakdown.add_argument("--out", required=True, help="directory of position_breakdown.{tex,csv,md,html}")


def run_command(args) -> None:
    from posbias.sweep import steps
    from posbias.sweep.jobs import BreakdownJob, ShownModels, SweepReportJob
    from posbias.sweep.paths import breakdown_table, sensitivity_table, sweep_report

    config = read_config_object(args.config)
    if args.sweep_command == "breakdown":
        if not config.tables.get("position_breakdown"):
            raise InputError(f"{args.config}: no tables.position_breakdown")
        job = config.sweep.breakdown_args()
        steps.breakdown_report(BreakdownJob(args.averaged, args.positions, job["spec"],
                                            ShownModels(job["models"], job["n_seeds"], job["zero_shot"]),
                                            job["retriever_label"], job["correction"], job["alpha"],
                                            breakdown_table(args.out)))
        return
    if config.sweep.queryset is None:
        raise InputError(f"{args.config}: no sweep (a sweep section and a query set of collection sweep)")
    if args.sweep_command == "build":
        job, out = config.sweep.build_args(), Path(args.out)
        sources = {k: getattr(args, k) for k in ("queries", "qrels", "docs", "positions", "candidates")}
        outputs = {"docs": "docs.jsonl", "queries": "queries.tsv", "qrels": "qrels.txt", "positions": "positions.tsv",
                   "candidates": "candidates.run"}
        steps.build_sweep(sources, args.passages, args.passage_qrels, job["settings"], job["tokenizer"],
                          job["queryset"], job["depth"], {k: str(out / name) for k, name in outputs.items()})
        return
    if not config.sweep.models:
        raise InputError(f"{args.config}: the sweep query set {config.sweep.queryset!r} is not reranked "
                         f"(rerank.querysets), so there is nothing to report")
    job = config.sweep.report_args()
    tables, figure = sweep_report(args.out)
    steps.sweep_report(SweepReportJob(args.per_seed, args.positions, args.candidates,
                                      ShownModels(job["models"], job["n_seeds"], job["zero_shot"]), job["metric"],
                                      job["statistics"], job["alpha"], job["first_window"], tables, figure,
                                      job["note"], sensitivity_table(args.out)))
