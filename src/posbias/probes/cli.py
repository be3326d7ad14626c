"""`posbias probes build|score|report|rag`: the bias probes' steps, each alone (rules/probes.smk runs them)."""

from __future__ import annotations

from pathlib import Path

from posbias.command_flags import POSITIVE, add_stage, read_config_object, reads, required_section
from posbias.errors import InputError
from posbias.probes.declarations.foil import FOIL
from posbias.probes.declarations.poison import POISON
from posbias.probes.jobs import RagInputs, RagJob, RagOutputs, ReportJob


def register(commands) -> None:
    """Add `posbias probes` and its subcommands to the command line's subparsers."""
    steps = add_stage(commands, "probes", handler=run_command,
                      help="bias probes (Fayyaz et al. 2025): build the document pairs, score "
                           "them, test and report (each step alone)")
    build = steps.add_parser("build", help="write every probe's pairs ({probe}.jsonl), the heatmap's queries and "
                                           "the query table's counts, as the config's probes section asks")
    build.add_argument("--config", default="config.yaml")
    build.add_argument("--out", required=True, help="directory of the pairs files")
    score = steps.add_parser("score", help="score every probe's pairs with one scorer of the config")
    score.add_argument("--config", default="config.yaml")
    score.add_argument("--scorer", required=True, help="a key of the config's probes.scorers")
    reads(score, "--pairs", "directory", required=True, help="the pairs files (posbias probes build)")
    reads(score, "--checkpoint", "directory",
           help="a checkpoint scorer's model directory (default: the workflow's results/models/<model>/seed<s>)")
    score.add_argument("--out", required=True, help="directory of the scores ({scorer}.parquet and "
                                                    "{scorer}.heatmap.parquet)")
    score.add_argument("--threads", type=POSITIVE, help="CPU threads (default: torch's)")
    report = steps.add_parser("report", help="paired tests of every scorer in --scores, corrected together; "
                                             "the probe table and figures")
    report.add_argument("--config", default="config.yaml")
    reads(report, "--pairs", "directory", required=True, help="the pairs files (for query_table.json)")
    reads(report, "--scores", "directory", required=True, help="the scores (posbias probes score)")
    report.add_argument("--out", required=True, help="directory of probes.{tex,csv,md,html} and figures/")
    rag = steps.add_parser("rag", help="RAG poisoning: the config's probes.rag readers answer the poison probe's "
                                       "questions, its judge decides (through the response cache)")
    rag.add_argument("--config", default="config.yaml")
    reads(rag, "--pairs", "directory", required=True, help="the pairs files, with poison (posbias probes build)")
    rag.add_argument("--out", required=True, help="directory of answers.parquet, rag.{tex,csv,md,html} and the "
                                                  "judge's swap check, judge_consistency.{parquet,json}")


def run_command(args) -> None:
    from posbias.probes import paths, steps as probes

    config = read_config_object(args.config)
    section = required_section(config.data, "probes", args.config)
    names = section["probes"]
    if args.probes_command == "build":
        files = probes.redocred_files(section["redocred"], str(Path(args.out) / "synthetic_revised.json"))
        if "synthetic" in section["redocred"]:
            from posbias.docred.synthetic import write_synthetic_redocred

            synthetic = section["redocred"]["synthetic"]
            write_synthetic_redocred(files["files"][0]["path"], synthetic["seed"], synthetic["n_documents"])
        poison = section.get("poison", {}) if POISON in names else {}
        llm = config.llm.model(poison["model"]) if poison.get("source") == "llm" else None
        out = str(Path(args.out))
        probes.build({**section, "redocred": files}, {p: paths.pairs(p, out) for p in names},
                     paths.pairs(probes.HEATMAP, out), paths.query_table(out),
                     paths.replacements(out) if poison else None, llm, config.llm.cache)
        return
    pairs_dir = str(Path(args.pairs))
    pairs = {p: Path(paths.pairs(p, pairs_dir)) for p in names}
    missing = [str(path) for path in [*pairs.values(), Path(paths.pairs(probes.HEATMAP, pairs_dir))]
               if not path.exists()]
    if missing:
        raise InputError(f"--pairs {args.pairs}: no {Path(missing[0]).name} (write it with posbias probes build)")
    if args.probes_command == "rag":
        _probes_rag(args, config, section)
        return
    scorers = section["scorers"]
    if args.probes_command == "score":
        if args.scorer not in scorers:
            raise InputError(f"--scorer {args.scorer}: {args.config} has no probes.scorers.{args.scorer}; known: "
                             f"{', '.join(sorted(scorers))}")
        checkpoint = args.checkpoint or config.probes.checkpoint(args.scorer)
        if checkpoint is not None and not Path(checkpoint).is_dir():
            raise InputError(f"--checkpoint {checkpoint}: no such directory (train the model first, or name its "
                             f"checkpoint with --checkpoint)")
        out = str(Path(args.out))
        probes.score(config.probes.scorer(args.scorer), checkpoint, {p: str(path) for p, path in pairs.items()},
                     paths.pairs(probes.HEATMAP, pairs_dir), paths.scores(args.scorer, out),
                     paths.heatmap_scores(args.scorer, out), args.threads)
        return
    scores_dir = str(Path(args.scores))
    found = [name for name in scorers if Path(paths.scores(name, scores_dir)).exists()]
    if not found:
        raise InputError(f"--scores {args.scores}: no scores of any probes.scorers entry (posbias probes score)")
    tables, figures = paths.report_paths(args.out, names)
    probes.report(ReportJob({s: paths.scores(s, scores_dir) for s in found},
                            {s: paths.heatmap_scores(s, scores_dir) for s in found}, paths.query_table(pairs_dir),
                            {s: config.probes.label(s) for s in found}, section["correction"], section["alpha"],
                            section["heatmap"], tables, figures, paths.sensitivity_paths(args.out, names)))


def _probes_rag(args, config, section: dict) -> None:
    from posbias.outputs import table_files
    from posbias.probes import paths, steps as probes

    settings = section.get("rag")
    if not settings:
        raise InputError(f"{args.config}: no probes.rag section (its readers and judge)")
    pairs_dir = str(Path(args.pairs))
    replacements = paths.replacements(pairs_dir)
    if not Path(replacements).exists():
        raise InputError(f"--pairs {args.pairs}: no poison_replacements.jsonl (list poison under probes.probes and "
                         f"run posbias probes build)")
    readers = settings["readers"]
    inputs = RagInputs(paths.pairs(POISON, pairs_dir), paths.pairs(FOIL, pairs_dir), replacements)
    answers, judge_pairs, judge_summary = paths.rag_files(str(Path(args.out)))
    outputs = RagOutputs(answers, table_files(args.out, "rag"), judge_pairs, judge_summary)
    probes.rag(RagJob(settings, inputs, outputs, {name: config.llm.model(name) for name in readers},
                      {name: config.llm.label(name) for name in readers}, config.llm.model(settings["judge"]),
                      config.llm.cache, section["correction"], section["alpha"], config.llm.label(settings["judge"])))
