"""The jobs a run would execute, from Snakemake's own DAG of the workflow (never a copy of its logic).

`scheduled_jobs` builds the DAG through Snakemake's Python API as `snakemake -n --configfile FILE TARGET...` does
(the same Snakefile, config file and targets, in a working directory), and returns each job that needs to run with
what the plan reads from it: its rule, wildcards, params, input files, the GPUs it asks for, and whether it runs
beside Snakemake (`localrule: True`, or a rule like `all` that runs nothing) or is submitted to the cluster.

Snakemake's public API runs a dry run but does not return its jobs, so the DAG is built the way `snakemake --dag`
builds it (`Workflow._prepare_dag` and `_build_dag`, as `Workflow.printdag` calls them); that is the one place
this package reaches into Snakemake, and tests/planning/test_dag.py checks its counts against a real dry run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import tempfile
from pathlib import Path
from typing import Iterable

from posbias.errors import InputError, one_line
from posbias.workflow import workflow_root

REPOSITORY = workflow_root()  # the checkout, or the workflow an installed wheel carries
SNAKEFILE = REPOSITORY / "Snakefile"


@dataclasses.dataclass(frozen=True)
class ScheduledJob:
    rule: str
    wildcards: dict
    params: dict
    inputs: dict  # input name -> list of paths (a single path as a list of one)
    gpus: int
    local: bool  # runs beside Snakemake, never submitted


def scheduled_jobs(config_file: str | Path, targets: Iterable[str] = (), directory: str | Path | None = None,
                   snakefile: str | Path = SNAKEFILE) -> list[ScheduledJob]:
    """The jobs that `snakemake -n --configfile config_file *targets` in `directory` would run (the workflow's
    default target when `targets` is empty). Without `directory`, an empty one: the whole run from scratch. A
    target that no rule makes, or a graph that cannot be built, is an `InputError` naming it."""
    return scheduled_run(config_file, targets, directory, snakefile)[0]


def scheduled_run(config_file: str | Path, targets: Iterable[str] = (), directory: str | Path | None = None,
                  snakefile: str | Path = SNAKEFILE) -> tuple[list[ScheduledJob], list[str]]:
    """`scheduled_jobs`, and the input files that no rule makes and that the plan stood in for. In an empty
    directory (no `directory`), the files a user places in the run directory by hand (Re-DocRED, the Lost in the
    Middle questions, doc2query expansions) are missing by definition; the DAG does not depend on what they hold,
    so each one is an empty file there, named in the plan. In a given `directory`, a missing input is an error."""
    targets = list(targets)
    with contextlib.ExitStack() as stack:
        fresh = directory is None
        if fresh:
            directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="posbias-plan-"))
        directory, assumed = Path(directory).resolve(), []
        while True:
            try:
                return _jobs(Path(config_file).resolve(), targets, directory, Path(snakefile)), assumed
            except _MissingSources as missing:
                if not fresh or any(Path(f).is_absolute() or f in assumed for f in missing.files):
                    raise InputError(missing.message) from None
                for name in missing.files:
                    (directory / name).parent.mkdir(parents=True, exist_ok=True)
                    (directory / name).touch()
                assumed += missing.files


class _MissingSources(Exception):
    """Snakemake found input files that no rule makes (`files`, as its message lists them)."""

    def __init__(self, message: str, files: list[str]):
        super().__init__(message)
        self.message, self.files = message, files


def _jobs(config_file: Path, targets: list[str], directory: Path, snakefile: Path) -> list[ScheduledJob]:
    from snakemake.api import SnakemakeApi
    from snakemake.exceptions import MissingInputException, RuleException, WorkflowError
    from snakemake.settings.types import (ConfigSettings, DAGSettings, OutputSettings, Quietness,
                                          ResourceSettings)

    # Snakemake logs the DAG's building and the Snakefile's warnings; the plan prints its own table instead.
    output = OutputSettings(quiet={Quietness.ALL})
    with _silenced(), SnakemakeApi(output) as api:
        workflow_api = api.workflow(resource_settings=ResourceSettings(),
                                    config_settings=ConfigSettings(configfiles=[config_file]),
                                    snakefile=snakefile, workdir=directory)
        what = f"the jobs of {' '.join(targets) or 'the default target'} with --configfile {config_file}"
        try:
            # The DAG API sets the targets on the workflow (a dry run's), then the DAG is built as --dag builds it.
            workflow_api.dag(DAGSettings(targets=set(targets)))
            workflow = workflow_api._workflow
            workflow._prepare_dag(forceall=False, ignore_incomplete=True, lock_warn_only=True, nolock=True)
            workflow._build_dag()
        except MissingInputException as err:
            # Snakemake keeps the files only in its message: "affected files:" and one per line after it
            files = [line.strip() for line in str(err).split("affected files:", 1)[-1].splitlines() if line.strip()]
            raise _MissingSources(f"snakemake cannot build {what}: {one_line(str(err))}", files) from None
        except (WorkflowError, RuleException) as err:  # no rule makes a target, a cycle, an input function fails
            raise InputError(f"snakemake cannot build {what}: {_first_line(err)}") from None
        except SystemExit as exit_:  # the Snakefile refuses a config it cannot load ("config error: ...")
            raise InputError(f"{config_file}: {exit_.code}") from None
        return [_scheduled(job, workflow) for job in workflow.dag.needrun_jobs()]


def _scheduled(job, workflow) -> ScheduledJob:
    rule = job.rule
    # Workflow.is_local answers True for every rule until an executor is chosen (a dry run has none), so the
    # rule's own marks are read: `localrule: True` (or `localrules:`), or a rule that runs nothing (`all`).
    local = rule.group is None and (rule.name in workflow._localrules or rule.norun)
    inputs = {name: [str(p) for p in paths] if isinstance(paths, list) else [str(paths)]
              for name, paths in job.input.items()}
    return ScheduledJob(rule=rule.name, wildcards=dict(job.wildcards_dict), params=dict(job.params.items()),
                        inputs=inputs, gpus=int(job.resources.get("gpu", 0) or 0), local=local)


def _first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0] if lines else type(err).__name__


@contextlib.contextmanager
def _silenced():
    """Snakemake's log ("Building DAG of jobs...", the Snakefile's config warnings) and prints kept off the plan's
    output: its logger is kept from passing records on to the root logger's handlers (a posbias job log's)."""
    snakemake_log = logging.getLogger("snakemake")
    propagate = snakemake_log.propagate
    snakemake_log.propagate = False
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        snakemake_log.propagate = propagate
