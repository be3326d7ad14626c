"""Staging a config's inputs on a machine with internet (a cluster's login node), before jobs run offline
(docs/cluster.md; posbias.staging, posbias.config.inputs, posbias.staging.steps).

    posbias stage --config config/paper/robust04.yaml              (everything the config reads)
    posbias stage --config config/paper/audit.yaml results/real_models/audit/leaderboard.html   (a target's)
    posbias stage --config config/paper/study.yaml --dry-run       (what is here and what is not; no network)
"""

from __future__ import annotations

from pathlib import Path

from posbias.command_flags import add_command, read_config_object


def register(commands) -> None:
    stage_ = add_command(
        commands, "stage", stage,
        help="download every remote input a config (or a target) needs (ir_datasets files, Hugging Face models and "
             "datasets at pinned or resolved revisions, recorded in results/staging.lock.yaml), check the files "
             "placed by hand against their sha256, and print what is present, fetched and missing")
    stage_.add_argument("--config", required=True)
    stage_.add_argument("targets", nargs="*", metavar="TARGET",
                        help="Snakemake targets: stage only the inputs of the jobs a dry run of them schedules "
                             "(default: every input the config names)")
    stage_.add_argument("--dry-run", action="store_true",
                        help="only look at what is on disk: no network, nothing written")
    stage_.add_argument("--directory", metavar="RUN",
                        help="the run directory (snakemake -d): the lock file goes to its results/, and relative "
                             "paths in the config are read from there, as the jobs read them (default: here)")
    stage_.add_argument("--snakefile", help="with targets: the workflow's Snakefile (default: ./Snakefile, else "
                                            "the one of the checkout posbias runs from)")


def _snakefile(given: str | None) -> str:
    from posbias.errors import InputError
    from posbias.provenance.environment import code_root

    if given:
        return given
    for root in (Path.cwd(), code_root()):
        if root is not None and (root / "Snakefile").is_file():
            return str(root / "Snakefile")
    raise InputError("--snakefile: no Snakefile here or in the checkout posbias runs from; name it")


def stage(args) -> None:
    if args.directory:
        with run_directory(args):
            return stage_here(args)
    return stage_here(args)


def stage_here(args) -> None:
    from posbias.config import inputs as needs
    from posbias.staging import steps as staging

    cfg = read_config_object(args.config)
    wanted = needs.collect(cfg.data)
    if args.targets:
        by_hand = [need.name for need in wanted if need.kind == needs.FILE]
        jobs = staging.scheduled_jobs(args.config, args.targets, _snakefile(args.snakefile), by_hand)
        wanted = needs.select(wanted, jobs)
    rows = staging.stage(wanted, fetch=not args.dry_run)
    print(staging.table(rows), end="")
    locked = not args.dry_run and any(row.need.kind in (needs.HUB_MODEL, needs.HUB_DATASET) for row in rows)
    print(staging.summary(rows) + (f"; hub revisions locked in {staging.lock_shown()}" if locked else ""))
    staging.outcome(rows, args.dry_run)


def run_directory(args):
    """Work from the run directory, as its jobs do, with the config and the Snakefile as named from here. Without
    --dry-run a missing directory is made (the lock file goes there); with it nothing is written."""
    import contextlib
    import os

    from posbias.errors import InputError

    args.config = os.path.abspath(args.config)
    args.snakefile = os.path.abspath(_snakefile(args.snakefile)) if args.targets else args.snakefile
    run = Path(args.directory)
    if not run.is_dir():
        if run.exists() or args.dry_run:
            raise InputError(f"--directory {args.directory}: not a directory" + (
                "" if run.exists() else " (a dry run makes none)"))
        run.mkdir(parents=True)
    return contextlib.chdir(run)
