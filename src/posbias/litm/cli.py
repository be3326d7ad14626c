"""`posbias litm build|run|score|evaluate|report`: the Lost-in-the-Middle stage's steps, each alone (rules/litm.smk
runs them with the same arguments, from `CFG.litm`).

    posbias litm build --config config.yaml --task qa --out results/litm/data/qa
    posbias litm run --config config.yaml --task qa --model smollm2 --data results/litm/data/qa \
        --out results/litm/predictions/qa/smollm2
    posbias litm score --predictions results/litm/predictions/qa/smollm2/default/k5_gold_at_2.jsonl.gz
    posbias litm evaluate --config config.yaml --task qa --predictions results/litm/predictions \
        --out results/litm/eval/qa.parquet
    posbias litm report --config config.yaml --eval results/litm/eval/qa.parquet ... --out results/litm
"""

from __future__ import annotations

import json
from pathlib import Path

from posbias.command_flags import add_stage, read_config, read_config_object, reads, required_section
from posbias.errors import InputError
from posbias.litm.jobs import PredictJob, Reader
from posbias.litm.paths import PREDICTIONS


def register(commands) -> None:
    """Add `posbias litm` and its subcommands to the command line's subparsers."""
    steps = add_stage(commands, "litm", handler=run_command,
                      help="Lost in the Middle: build the examples, ask a language model, score "
                           "the answers (each step alone)")
    build = steps.add_parser("build", help="write a task's data files (one per setting) as the config's litm "
                                           "section asks")
    build.add_argument("--config", default="config.yaml")
    build.add_argument("--task", choices=["qa", "kv"], required=True)
    build.add_argument("--out", required=True, help="directory of the data files ({setting}.jsonl.gz)")
    run = steps.add_parser("run", help="ask a language model every prompt of a task's data files")
    run.add_argument("--config", default="config.yaml")
    run.add_argument("--task", choices=["qa", "kv"], required=True)
    run.add_argument("--model", required=True, help="a key of the config's llm.models")
    reads(run, "--data", "directory", required=True, help="the data files (posbias litm build)")
    run.add_argument("--out", required=True, help="directory of the predictions ({variant}/{setting}.jsonl.gz)")
    run.add_argument("--cache-mode", choices=["read_write", "read_only", "off"],
                     help="the response cache's mode instead of the config's llm.cache.mode")
    evaluate = steps.add_parser("evaluate", help="score every prediction file of a task, of every model of the "
                                                 "config, into one Parquet file (what the report reads)")
    evaluate.add_argument("--config", default="config.yaml")
    evaluate.add_argument("--task", choices=["qa", "kv"], required=True)
    reads(evaluate, "--predictions", "directory", default=PREDICTIONS,
          help="the predictions' root, <task>/<model>/<variant>/<setting>.jsonl.gz (posbias litm run --out "
               f"<root>/<task>/<model>; default: {PREDICTIONS})")
    evaluate.add_argument("--out", required=True, help="the scored answers (Parquet)")
    report = steps.add_parser("report", help="accuracy by gold position: a table (tex, csv, md, html) and a figure "
                                             "(png, pdf) per task and size")
    report.add_argument("--config", default="config.yaml")
    reads(report, "--eval", nargs="+", required=True, help="each task's scored answers (posbias litm evaluate)")
    report.add_argument("--out", required=True, help="directory of the tables and of figures/")
    score = steps.add_parser("score", help="score a predictions file in the authors' layout (answers or value, "
                                           "and model_answer); prints the accuracy as JSON")
    reads(score, "--predictions", required=True)
    score.add_argument("--task", choices=["qa", "kv"], help="default: read from the first record")
    score.add_argument("--out", help="also write the scored records (with metric_* fields) here (.jsonl.gz)")
    score.add_argument("--lstrip-first", action="store_true",
                       help="strip leading whitespace before taking the first line (the authors' Llama-2 script "
                            "did; their other scripts did not)")


def run_command(args) -> None:
    from posbias.litm import steps as litm

    if args.litm_command == "score":
        from posbias.litm.score import score_file

        frame = score_file(args.predictions, out=args.out, task=args.task, lstrip_first=args.lstrip_first)
        print(json.dumps({"predictions": args.predictions, "n": len(frame), "accuracy": float(frame["score"].mean()),
                          **({"empty_first_line": int(frame["empty_first_line"].sum())}
                             if "empty_first_line" in frame else {})}))
        return
    if args.litm_command in ("evaluate", "report"):
        _score_or_report(args)
        return
    config = read_config(args.config)
    section = required_section(required_section(config, "litm", args.config), args.task, args.config)
    if args.litm_command == "build":
        outputs = {name: str(Path(args.out) / f"{name}.jsonl.gz")
                   for name, _, _ in litm.settings(args.task, section) if name != litm.CLOSED_BOOK}
        if args.task == "kv":
            litm.build_kv(section, outputs)
            return
        retrieval = section["source"].get("path")
        if section["source"]["kind"] == "synthetic":
            retrieval = str(Path(args.out) / "synthetic-retrieval.jsonl.gz")
            litm.build_synthetic_qa(required_section(config, "generator", args.config), section["source"]["n_questions"],
                                    retrieval)
        litm.build_qa(section, retrieval, outputs)
        return
    known = config.get("llm", {}).get("models", {})
    if args.model not in known:
        raise InputError(f"--model {args.model}: {args.config} has no llm.models.{args.model}; known: "
                         f"{', '.join(sorted(known)) or 'none'}")
    llm = known[args.model]
    cache = {**config.get("llm", {}).get("cache", {"dir": "cache/llm", "mode": "read_write"}),
             **({"mode": args.cache_mode} if args.cache_mode else {})}
    data = {name: str(Path(args.data) / f"{name}.jsonl.gz") for name, _, _ in litm.settings(args.task, section)
            if name != litm.CLOSED_BOOK}
    for path in data.values():
        if not Path(path).exists():
            raise InputError(f"--data {args.data}: no {Path(path).name} (write it with posbias litm build)")
    outputs = {f"{variant}/{name}": str(Path(args.out) / variant / f"{name}.jsonl.gz")
               for name, _, _ in litm.settings(args.task, section)
               for variant in litm.variants_of(args.task, section, name)}
    reader = Reader(args.model, {k: v for k, v in llm.items() if k != "label"}, cache, config["litm"]["decoding"])
    litm.predict(PredictJob(args.task, section, reader, data, outputs))


def _score_or_report(args) -> None:
    from posbias.litm import steps as litm
    from posbias.litm.paths import prediction

    config = read_config_object(args.config)
    required_section(config.data, "litm", args.config)
    if args.litm_command == "report":
        job = config.litm.report_params(args.out)
        litm.report(args.eval, job["labels"], job["tables"], job["figures"], job["correction"], job["sensitivity"])
        return
    required_section(config.data["litm"], args.task, args.config)
    job = config.litm.score_params(args.task)
    files = {key: prediction(args.task, *key.split("/", 1), root=args.predictions) for key in job["prediction_keys"]}
    for path in files.values():
        if not Path(path).exists():
            raise InputError(f"--predictions {args.predictions}: no {Path(path).relative_to(args.predictions)} "
                             f"(write it with posbias litm run)")
    litm.score(args.task, files, args.out)
