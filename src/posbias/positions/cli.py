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
    from posbias.positions import paths, steps
    from posbias.positions.jobs import DenseJob, Judge, QuerySetFiles, ReportJob, SetOutputs, SparseJob

    section = read_config_object(args.config).positions
    if not section.sets:
        raise InputError(f"{args.config}: no positions section (its sets)")
    if args.positions_command == "locate":
        if args.set not in section.sets:
            raise InputError(f"--set {args.set}: {args.config} has no positions.sets.{args.set}; known: "
                             f"{', '.join(sorted(section.sets))}")
        job, name, out = section.set_args(args.set), args.set, str(Path(args.out))
        Path(out).mkdir(parents=True, exist_ok=True)
        files = QuerySetFiles(args.docs, args.queries, args.qrels)
        if section.sets[name]["kind"] == "sparse":
            if not (args.passages and args.passage_qrels):
                raise InputError("--passages: a sparse set matches its relevant passages; give --passages and "
                                 "--passage-qrels")
            steps.sparse(SparseJob(job["spec"], job["settings"], files, args.passages, args.passage_qrels,
                                   SetOutputs(paths.rows(name, out), paths.summary(name, out)),
                                   passage_queries=args.passage_queries, index=args.index,
                                   retriever=job["retriever"], threads=args.threads))
        else:
            outputs = SetOutputs(paths.rows(name, out), paths.summary(name, out), paths.judgments(name, out),
                                 paths.consistency(name, out))
            steps.dense(DenseJob(job["spec"], job["settings"], Judge(job["judge"], job["judge_name"], job["cache"]),
                                 files, outputs, passages=args.passages, passage_qrels=args.passage_qrels,
                                 order_judges=job["order_judges"]))
        return
    job, rows = section.report_args(), str(Path(args.rows))
    missing = [s for s in job["sets"] if not Path(paths.rows(s, rows)).exists()]
    if missing:
        raise InputError(f"--rows {args.rows}: no {missing[0]}.tsv (locate it with posbias positions locate)")
    truth = {s: str(Path(args.truth) / f"{section.sets[s]['queryset']}.tsv") for s in job["sets"]
             if args.truth and (Path(args.truth) / f"{section.sets[s]['queryset']}.tsv").exists()}
    tables, figures, agreement = paths.report_paths(args.out)
    sets = job["sets"]
    steps.report(ReportJob({s: paths.rows(s, rows) for s in sets}, {s: paths.summary(s, rows) for s in sets},
                           job["settings"], job["labels"], {g: job["groups"][g] for g in job["group_order"]},
                           job["figure1"], tables, figures, truth, agreement, paths.judges_paths(args.out),
                           job["judge_labels"], job["oracle_judges"]))
