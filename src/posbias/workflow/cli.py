"""The packaged workflow (`posbias.workflow`), for an installed posbias without the clone:

    posbias workflow init study                       (a run directory: config.yaml, config/, profiles/)
    posbias workflow run study -j 2                   (snakemake -j 2 in it, on the packaged Snakefile)
    posbias workflow run study -j 8 results/table1.tex --configfile config/paper/robust04.yaml
    posbias workflow path                             (the directory holding the Snakefile it runs)

Everything after `run DIR` goes to Snakemake unchanged (targets before --configfile, as Snakemake reads them).
"""

from __future__ import annotations

import argparse

from posbias.command_flags import add_command, add_stage


def register(commands) -> None:
    workflow = add_stage(commands, "workflow", help="the workflow the installed package carries: write a run "
                                                    "directory, run Snakemake in it", handler=None)
    init = add_command(workflow, "init", init_command,
                       help="write a run directory: the embedded default's config.yaml, the paper configs under "
                            "config/, the profiles")
    init.add_argument("directory", metavar="DIR", help="a new (or empty) directory")
    run = add_command(workflow, "run", run_command, help="run Snakemake in a run directory on the packaged Snakefile")
    run.add_argument("directory", metavar="DIR", help="the run directory (`posbias workflow init` wrote it)")
    run.add_argument("snakemake", nargs=argparse.REMAINDER, metavar="...",
                     help="Snakemake's targets and options, as `snakemake` takes them")
    add_command(workflow, "path", path_command, help="print the directory holding the Snakefile it runs")


def init_command(args) -> None:
    from posbias.workflow import init_directory, workflow_root

    written = init_directory(args.directory)
    print(f"wrote {', '.join(written)} into {args.directory} (from {workflow_root()}); "
          f"run it with: posbias workflow run {args.directory} -j 2")


def run_command(args) -> int:
    from posbias.workflow import run

    return run(args.directory, args.snakemake)


def path_command(args) -> None:
    from posbias.workflow import workflow_root

    print(workflow_root())
