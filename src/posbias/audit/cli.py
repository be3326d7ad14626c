"""`posbias audit`: the position-sensitivity audit of one model, with no config to write.

    posbias audit --model cross-encoder:models/my-reranker --out audits/
    posbias audit --model "cross-encoder:models/my-reranker?window=256&stride=128&aggregate=max" --out audits/
    posbias audit --model cross-encoder:models/my-reranker --name my-reranker-maxp --out audits/ \
        --mitigation "window_aggregation?window=256&stride=128" --mitigates my-reranker
    posbias audit --model bi-encoder:offline:all-MiniLM-L6-v2 --out audits/ --battery sweep
    posbias audit --model "reader:hf_causal:offline:SmolLM2-135M-Instruct?dtype=float32" --out audits/
    posbias audit --model "rankgpt:openai_chat:gpt-4o-mini-2024-07-18?base_url=http://localhost:8000/v1" --out a/
    posbias audit --config config.yaml --name minilm --battery sweep --out results/audit --no-report
    posbias audit --report-only --out audits/
    posbias audit --report-only --no-report --out audits/ --name my-reranker --export hf hub/ --export mteb mteb/
    posbias audit compare audits/my-reranker audits/my-reranker-maxp --out audits/compare/maxp
    posbias export-hf --checkpoint results/models/firstp_cls/seed1 --out exported/firstp_cls
    posbias audit-corpus --out corpora/nq
    posbias audit-finetune --config config.yaml --name minilm_balanced --out results/audit/finetuned/minilm_balanced
    posbias calibration --out results/calibration --battery sweep --units 12 24 48

Each run writes its batteries' files under `<out>/<name>/` and then every card and the leaderboard of `<out>`
(`posbias.audit.card`), and the mitigation table where a mitigated audit sits beside its base
(`posbias.audit.mitigations`); `--report-only` rewrites those from the files already there. `--export hf|mteb DIR`
then writes the audit for the Hub or MTEB, read back by their libraries, uploading nothing
(`posbias.audit.hub_export`, `posbias.audit.mteb_export`). `--config` with `--name`
audits a model of the config's `audit.models` with the config's battery settings, as the workflow's job does.
"""

from __future__ import annotations

import yaml

from posbias.audit.battery_settings import DECLARED
from posbias.audit.calibration import CALIBRATED, SHAPES
from posbias.command_flags import POSITIVE, SEED, add_command, integer, number, read_config_object, reads
from posbias.errors import InputError

EXPORTS = ("hf", "mteb")  # --export FORMAT: posbias.audit.hub_export, posbias.audit.mteb_export


def register(commands) -> None:
    parser = add_command(commands, "audit", handler=run_command, usage_check=_usage,
                         help="the position-sensitivity audit of one model: its curves, card and the leaderboard")
    parser.add_argument("--model", help="KIND:TARGET[?key=value&...] (see `posbias.audit.spec`): cross-encoder, "
                                        "bi-encoder, checkpoint, llm-ranker, rankgpt or reader")
    parser.add_argument("--config", help="a workflow config whose audit.models names the model (with --name)")
    parser.add_argument("--name", help="the model's name: its directory and leaderboard row (with --config: the key "
                                       "of audit.models)")
    parser.add_argument("--out", help="directory of the audits (one subdirectory per model); required")
    parser.add_argument("--battery", action="append",
                        choices=tuple(DECLARED),
                        help="run only this battery (repeatable); default: every battery the model takes")
    parser.add_argument("--mitigation", help="audit the model as a mitigation changes it, KIND[?key=value&...]: "
                                             "window_aggregation, permutation_self_consistency, "
                                             "relevance_ordered_context, query_aware_contextualization, "
                                             "debiased_training, attention_calibration, "
                                             "position_balanced_finetuning, found_in_the_middle, ms_poe, "
                                             "attention_sorting, both_orders (posbias.audit.mitigations)")
    parser.add_argument("--mitigates", help="with --mitigation: the name of the audit (in --out) it is compared with")
    reads(parser, "--settings",
          help="YAML of battery settings, {battery: {key: value}} (posbias.audit.battery_settings)")
    parser.add_argument("--cache", help="the language models' response cache directory (default: the config's "
                                        "llm.cache, else cache/llm)")
    parser.add_argument("--cache-mode", choices=("read_write", "read_only", "off"),
                        help="default: the config's llm.cache mode, else read_write")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--no-report", action="store_true", help="write the batteries' files only")
    parser.add_argument("--report-only", action="store_true",
                        help="rewrite the cards and the leaderboard of --out from its audits")
    parser.add_argument("--export", action="append", nargs=2, metavar=("FORMAT", "DIR"),
                        help="also write the audit for publishing (repeatable): hf (Hub .eval_results, model card) "
                             "or mteb (MTEB result files), FORMAT[?key=value&...]; nothing is uploaded "
                             "(posbias.audit.hub_export, posbias.audit.mteb_export); with --report-only: the audit "
                             "--name names, or the only one in --out")
    actions = parser.add_subparsers(dest="audit_action", required=False, metavar="compare",
                                    help="`posbias audit compare A B --out DIR`: two audits compared unit by unit")
    compare = actions.add_parser("compare", help="two audits of the same batteries on the same units compared "
                                                 "paired, unit by unit (posbias.audit.compare)")
    compare.set_defaults(handler=compare_command, usage_check=None, command_parser=compare)
    reads(compare, "first", kind="directory", help="audit A, the one compared against (<out>/<name>/)")
    reads(compare, "second", kind="directory", help="audit B (<out>/<name>/)")
    compare.add_argument("--out", required=True, help="directory of the comparison's tables and comparison.html")
    compare.add_argument("--battery", action="append", help="compare only this battery (repeatable); default: "
                                                             "every battery with one curve that both audited")


    calibration = add_command(commands, "calibration", handler=calibration_command,
                              help="each battery's false-positive rate and power, on mock models with planted "
                                   "position effects (posbias.audit.calibration)")
    calibration.add_argument("--out", required=True, help="directory of calibration.{csv,md,tex,html,png,pdf}")
    calibration.add_argument("--battery", action="append", choices=CALIBRATED,
                             help="calibrate this battery (repeatable); default: sweep, probes and reader")
    calibration.add_argument("--units", type=integer(2), nargs="+", default=[12, 24, 48],
                             help="numbers of units (questions, probe queries) to calibrate at")
    calibration.add_argument("--shape", action="append", choices=SHAPES,
                             help="planted shape (repeatable); default: all of them")
    calibration.add_argument("--size", type=number(0, 1, low_open=True), default=0.15,
                             help="the planted drop at its deepest point, in MRR or accuracy (the probes' raw "
                                  "score: in standard deviations)")
    calibration.add_argument("--replicates", type=POSITIVE, default=100, help="runs per battery, shape and units")
    calibration.add_argument("--rho", type=number(0, 1), default=0.5,
                             help="correlation of a unit's success across its positions")
    calibration.add_argument("--seed", type=SEED, default=0)
    reads(calibration, "--settings", help="YAML of battery settings, {battery: {key: value}}, as the audit reads")

    corpus = add_command(commands, "audit-corpus", handler=corpus_command,
                         help="the audit's real corpus (NQ-open questions with Wikipedia passages, shipped with the "
                              "package) as the files a battery's source reads (posbias.audit.corpus)")
    corpus.add_argument("--out", required=True, help="directory of queries.tsv, qrels.txt, passages.jsonl, "
                                                     "qa.jsonl.gz")
    corpus.add_argument("--questions", type=integer(1), default=60, help="questions (the first usable ones)")
    corpus.add_argument("--pool", type=integer(1), default=400, help="haystack passages (other questions' gold)")
    corpus.add_argument("--depth", type=integer(2), default=20, help="retrieved distractors per reader question")

    finetune = add_command(commands, "audit-finetune", handler=finetune_command, usage_check=_finetune_usage,
                           help="a bi-encoder fine-tuned on position-balanced examples disjoint from the audit's "
                                "units, the twin position_balanced_finetuning audits "
                                "(posbias.audit.balanced_finetuning)")
    finetune.add_argument("--model", help="the bi-encoder to fine-tune, bi-encoder:DIR-OR-NAME")
    finetune.add_argument("--config", help="a workflow config whose audit.models entry --name mitigates its base with "
                                            "position_balanced_finetuning (its base's model and battery settings)")
    finetune.add_argument("--name", help="with --config: the mitigated entry of audit.models")
    finetune.add_argument("--out", required=True, help="the twin's directory (a sentence-transformers model)")
    finetune.add_argument("--questions", type=integer(1), default=48, help="training questions (3 examples each)")
    finetune.add_argument("--epochs", type=integer(1), default=1)
    finetune.add_argument("--batch-size", type=integer(2), default=16)
    finetune.add_argument("--learning-rate", type=number(0, 1, low_open=True), default=3e-5)
    finetune.add_argument("--seed", type=SEED, default=0)
    finetune.add_argument("--device", default="auto", help="auto, cpu or cuda")

    export = add_command(commands, "export-hf", handler=export_command,
                         help="a trained FirstP checkpoint (pooling: cls) as a Hugging Face sequence-classification "
                              "model (posbias.audit.export)")
    reads(export, "--checkpoint", kind="directory", required=True, help="the checkpoint (posbias train)")
    export.add_argument("--out", required=True, help="the model directory to write")


def compare_command(args) -> None:
    from posbias.audit.compare import compare_audits

    compare_audits(args.first, args.second, args.out, args.battery)
    print(f"{args.out}/comparison.html")


def calibration_command(args) -> None:
    from tqdm import tqdm

    from posbias.audit.calibration import calibrate, write_calibration

    overrides = _settings_file(args.settings) if args.settings else None
    batteries, shapes = args.battery or ["sweep", "probes", "reader"], args.shape or list(SHAPES)
    total = len(batteries) * len(args.units) * len(shapes) * args.replicates
    with tqdm(total=total, desc="calibration", unit="run") as bar:
        frame = calibrate(batteries, shapes, args.units, args.size, args.replicates, args.rho, overrides, args.seed,
                          progress=bar.update)
    for path in write_calibration(frame, args.out):
        print(path)


def _settings_file(path: str) -> dict:
    with open(path, encoding="utf-8") as handle:
        settings = yaml.safe_load(handle) or {}
    if not isinstance(settings, dict):
        raise InputError(f"{path}: expected a mapping of battery settings")
    return settings


def corpus_command(args) -> None:
    from posbias.audit.corpus import build_corpus

    for path in build_corpus(args.out, args.questions, args.pool, args.depth).values():
        print(path)


def _finetune_usage(args) -> str | None:
    if bool(args.config) == bool(args.model) or bool(args.config) != bool(args.name):
        return "give --model, or --config with --name"
    return None


def finetune_command(args) -> None:
    from posbias.audit.balanced_finetuning import finetune
    from posbias.device import pick_device

    model, settings = args.model, None
    if args.config:
        from posbias.audit.config import entry_of

        cfg = read_config_object(args.config)
        entry = entry_of(cfg.data, args.name) if args.name in cfg.audit.models else {}
        if entry.get("mitigation", {}).get("kind") != "position_balanced_finetuning":
            raise InputError(f"audit.models.{args.name}: not an entry mitigated by position_balanced_finetuning")
        model, settings = cfg.audit.spec(args.name), cfg.audit.settings(args.name)
    finetune(model, args.out, settings, str(pick_device(args.device)), n_questions=args.questions,
             epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate, seed=args.seed)
    print(args.out)


def export_command(args) -> None:
    from posbias.audit.export import export_checkpoint

    print(export_checkpoint(args.checkpoint, args.out))


def _exports(args) -> list[tuple[str, dict | None, str]]:
    """`--export FORMAT[?key=value&...] DIR` as (format, options, DIR); options None: not key=value pairs."""
    from urllib.parse import parse_qsl

    found = []
    for spec, directory in args.export or []:
        kind, _, query = spec.partition("?")
        try:
            options = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
        except ValueError:
            options = None
        found.append((kind, options, directory))
    return found


def _exporters() -> dict:
    """Each format's (check of its options, writer, what it writes into its directory)."""
    from posbias.audit import hub_export, mteb_export

    return {"hf": (hub_export.check_options, hub_export.export_hub, hub_export.WRITES),
            "mteb": (mteb_export.check_options, mteb_export.export_mteb, mteb_export.WRITES)}


def _export_problem(args) -> str | None:
    """A bad --export is refused before the audit runs: its format, its options, its directory (one an export may
    replace whole), and two exports into one directory."""
    from pathlib import Path

    from posbias.audit.hub_export import check_destination

    seen: dict[Path, str] = {}
    for kind, options, directory in _exports(args):
        if kind not in EXPORTS:
            return f"--export {kind!r}: FORMAT must be one of {', '.join(EXPORTS)}"
        if options is None:
            return f"--export {kind}: options must be key=value pairs joined by &"
        check, _, writes = _exporters()[kind]
        problem = check(options)
        if problem:
            return problem
        target = Path(directory).resolve()
        if target in seen:
            return f"--export {kind} {directory}: the --export {seen[target]} goes there too; give each its own"
        seen[target] = kind
        try:
            check_destination(Path(directory), writes, kind)
        except InputError as err:
            return str(err)
    return None


def _export(args, records: list[dict] | None) -> None:
    """Write each --export of the audit just run (`records`), or with --report-only of the audit --name names (else
    the only one in --out), printing what each wrote and how it was read back."""
    from pathlib import Path

    names = sorted({path.parent.name for path in Path(args.out).glob("*/*.json")})
    name = records[0]["name"] if records else args.name or (names[0] if len(names) == 1 else None)
    if name is None:
        raise InputError(f"--export: --out {args.out} holds the audits {', '.join(names) or 'none'}; give --name to "
                         f"choose one")
    for kind, options, directory in _exports(args):
        print(_exporters()[kind][1](Path(args.out) / name, directory, options))  # each checked by _export_problem


def _usage(args) -> str | None:
    if not args.out:
        return "--out is required"
    if args.export:
        problem = _export_problem(args)
        if problem:
            return problem
    if args.report_only:
        return "--report-only takes no model" if (args.model or args.config) else None
    if bool(args.model) == bool(args.config):
        return "give --model, or --config with --name"
    if args.config and not args.name:
        return "--config needs --name (a key of the config's audit.models)"
    if args.config and (args.mitigation or args.mitigates):
        return "--mitigation and --mitigates come from the config's entry with --config"
    if bool(args.mitigation) != bool(args.mitigates):
        return "--mitigation and --mitigates go together"
    return None


def run_command(args) -> None:
    from posbias.audit.jobs import AuditJob
    from posbias.audit.steps import audit, write_reports

    if not args.report_only:
        from posbias.audit.mitigations import parse_mitigation

        spec, name, settings, cache = args.model, args.name, None, {"dir": "cache/llm", "mode": "read_write"}
        batteries = args.battery
        mitigation = parse_mitigation(args.mitigation) if args.mitigation else None
        mitigates = args.mitigates
        if args.config:
            job = read_config_object(args.config).audit.job(args.name)
            spec, settings, cache = job["spec"], job["settings"], job["cache"]
            mitigation, mitigates = job.get("mitigation"), job.get("mitigates")
            batteries = args.battery or job["batteries"]  # the entry's batteries, as the workflow's jobs
        if args.settings:
            settings = _settings_file(args.settings)
        records = audit(AuditJob(spec, args.out, batteries, settings, name, args.cache or cache["dir"],
                                 args.cache_mode or cache["mode"], args.device, mitigation, mitigates))
    if not args.no_report:
        for card in write_reports(args.out):
            print(card)
    if args.export:
        _export(args, None if args.report_only else records)
