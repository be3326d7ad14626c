"""The FarRelevant stage by hand (rules/farrelevant.smk): the diagnostic set built from a passage collection, or
from the config's real source.

    posbias farrelevant --config config.yaml --passages ... --queries ... --qrels ... --out results/data/farrelevant
    posbias farrelevant-source --config config/paper/farrelevant.yaml --out results/data/farrelevant
"""

from __future__ import annotations

from posbias.command_flags import add_command, read_config_object, reads, required_section
from posbias.errors import InputError


def register(commands) -> None:
    far = add_command(commands, "farrelevant", farrelevant,
                      help="build FarRelevant documents from a passage collection")
    far.add_argument("--config", default="config.yaml")
    for name in ("passages", "queries", "qrels"):
        reads(far, f"--{name}", required=True)
    reads(far, "--negatives", help="documents (JSONL) that join the corpus unjudged, as the workflow's job adds the "
                                   "generator's hard negatives (results/data/synthetic-passages/negatives.jsonl)")
    far.add_argument("--out", required=True)
    far.add_argument("--queryset", help="the test query set's name (default: the config's FarRelevant query set)")

    far_source = add_command(commands, "farrelevant-source", farrelevant_source,
                             help="build FarRelevant from MS MARCO passages (ir_datasets) or import it, as the "
                                  "config's farrelevant.source says")
    far_source.add_argument("--config", required=True)
    far_source.add_argument("--out", required=True, help="directory for docs.jsonl, queries/, qrels/, positions/")


def farrelevant(args) -> None:
    from posbias.farrelevant.jobs import FarRelevantJob
    from posbias.farrelevant.steps import build_farrelevant

    cfg = read_config_object(args.config)
    required_section(cfg.data, "farrelevant", args.config)
    job = cfg.farrelevant.build_params()  # as the workflow's build_farrelevant job gets them
    build_farrelevant(FarRelevantJob(args.passages, args.queries, args.qrels, job["settings"], job["tokenizer"],
                                     args.out, args.queryset or job["queryset"], job["train_queryset"],
                                     args.negatives))


def farrelevant_source(args) -> None:
    from posbias.farrelevant.steps import build_farrelevant_source

    cfg = read_config_object(args.config)
    required_section(cfg.data, "farrelevant", args.config)
    if cfg.farrelevant.source["kind"] == "synthetic":
        raise InputError(f"{args.config}: farrelevant.source is synthetic; use `posbias farrelevant`")
    job = cfg.farrelevant.build_params()  # as the workflow's build_farrelevant_source job gets them
    build_farrelevant_source(job["source"], job["settings"], job["tokenizer"], args.out, job["queryset"],
                             job["train_queryset"])
