"""`posbias positions locate|report`: the first-relevant-position analysis's steps, each alone (rules/positions.smk
runs them with the same arguments, from `CFG.positions`)."""

from __future__ import annotations

from pathlib import Path

from posbias.command_flags import POSITIVE, add_stage, read_config_object, reads
from posbias.errors import InputError


def register(commands) -> None:
    """Add `posbias positions` and its subcommands to the command line's subparsers."""
    steps = add_stage(commands, "positions", handler=run_command,
                      help="where the first relevant passage sits: locate it in one set "
                           "of the config, or report every located set")
    locate = steps.add_parser("locate", help="one positions.sets entry: sparse sets match their relevant passages, "
                                             "dense sets have the judge read their chunks; writes {set}.tsv and "
                                             "{set}.json (and a dense set's {set}.judgments.parquet and its "
                                             "judges' order check, {set}.consistency.parquet)")
    locate.add_argument("--config", default="config.yaml")
    locate.add_argument("--set", required=True, help="a key of the config's positions.sets")
    reads(locate, "--docs", required=True, help="the set's documents (JSONL)")
    reads(locate, "--queries", required=True)
    reads(locate, "--qrels", required=True)
    reads(locate, "--passages", help="the relevant passages (JSONL; a sparse set needs them)")
    reads(locate, "--passage-qrels", help="the passages' judgments")
    reads(locate, "--passage-queries", help="the passages' queries, when they are another query set's")
    reads(locate, "--index", "directory", help="the documents' Lucene index (a sparse set with bm25_depth)")
    locate.add_argument("--out", required=True, help="directory of the set's files")
    locate.add_argument("--threads", type=POSITIVE, default=1)
    report = steps.add_parser("report", help="the table of shares, Figures 1 and 7 and the agreement CSV of every "
                                             "located set")
    report.add_argument("--config", default="config.yaml")
    reads(report, "--rows", "directory", required=True, help="the located sets' files (posbias positions locate)")
    reads(report, "--truth", "directory",
           help="the generator's positions directory (<queryset>.tsv), for the agreement of sets on its collection")
    report.add_argument("--out", required=True, help="directory of positions.{tex,csv,md,html}, figures/, "
                                                     "agreement.csv and the judges' judges.{tex,csv,md,html}")


def run_command(args) -> None:
    from posbias.positions import steps
    from posbias.positions.paths import judges_paths, report_paths

    section = read_config_object(args.config).positions
    if not section.sets:
        raise InputError(f"{args.config}: no positions section (its sets)")
    if args.positions_command == "locate":
        if args.set not in section.sets:
            raise InputError(f"--set {args.set}: {args.config} has no positions.sets.{args.set}; known: "
                             f"{', '.join(sorted(section.sets))}")
        job, out = section.set_args(args.set), Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        rows, summary = str(out / f"{args.set}.tsv"), str(out / f"{args.set}.json")
        if section.sets[args.set]["kind"] == "sparse":
            if not (args.passages and args.passage_qrels):
                raise InputError("--passages: a sparse set matches its relevant passages; give --passages and "
                                 "--passage-qrels")
            steps.sparse(job["spec"], job["settings"], args.docs, args.queries, args.qrels, args.passages,
                         args.passage_qrels, rows, summary, passage_queries=args.passage_queries, index=args.index,
                         retriever=job["retriever"], threads=args.threads)
        else:
            steps.dense(job["spec"], job["settings"], job["judge"], job["judge_name"], job["cache"], args.docs,
                        args.queries, args.qrels, rows, str(out / f"{args.set}.judgments.parquet"), summary,
                        passages=args.passages, passage_qrels=args.passage_qrels,
                        out_consistency=str(out / f"{args.set}.consistency.parquet"),
                        order_judges=job["order_judges"])
        return
    job, rows = section.report_args(), Path(args.rows)
    missing = [s for s in job["sets"] if not (rows / f"{s}.tsv").exists()]
    if missing:
        raise InputError(f"--rows {args.rows}: no {missing[0]}.tsv (locate it with posbias positions locate)")
    truth = {s: str(Path(args.truth) / f"{section.sets[s]['queryset']}.tsv") for s in job["sets"]
             if args.truth and (Path(args.truth) / f"{section.sets[s]['queryset']}.tsv").exists()}
    tables, figures, agreement = report_paths(args.out)
    steps.report({s: str(rows / f"{s}.tsv") for s in job["sets"]}, {s: str(rows / f"{s}.json") for s in job["sets"]},
                 job["settings"], job["labels"], {g: job["groups"][g] for g in job["group_order"]}, job["figure1"],
                 tables, figures, truth, agreement, judges_paths(args.out), job["judge_labels"],
                 job["oracle_judges"])
