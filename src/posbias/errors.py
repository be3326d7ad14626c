"""The one exception type for input that a user can fix.

An `InputError` says that a file, a command-line flag or a config key cannot be used, and its message names
it: `path:line: ...` for a line of a file, the flag, or the config key path (`models.maxp.args.stride`). The
`posbias` command prints such an error (and an `OSError`: a missing or unreadable path) as one line and exits
with status 2; every other exception is a bug and keeps its traceback.

It is a `ValueError`, so code that catches bad values keeps working. Readers raise `posbias.io.FormatError`
for a malformed line, collection sources `posbias.data.sources.SourceError` and the config's checks (and the
declarations they call) a `ConfigError`, whose message starts with the file or key; all are `InputError`s.

An `InfrastructureError` is a fault of what a run stands on, not of its input: a disk that fills, a language-model
server that keeps failing, a job stopped before its time limit. It is one line too, naming the path or the server
(or where the stopped work saved its state), with an exit status of its own
(`exit_status`) so that a script or a scheduler can tell it from bad input; rerunning the same command after the
fault is mended goes on from what was kept.
"""

from __future__ import annotations


class InputError(ValueError):
    """Input a user can fix (a file, a flag, a config key); the message names it."""


class ConfigError(InputError):
    """A config problem; the message starts with the file or the key it is about (`posbias.config`)."""


def one_line(message: str) -> str:
    """A message's lines joined into one, for a terminal or a job log."""
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def first_line(err: BaseException) -> str:
    """The first line of an exception's message (a library's may span several), or its type's name."""
    lines = str(err).strip().splitlines()
    return lines[0].strip() if lines else type(err).__name__


class InfrastructureError(Exception):
    """A fault outside the user's input (a full disk, a failing server); the message names where it happened."""

    exit_status = 3


class DiskFullError(InfrastructureError):
    """A write that found no space left: the message names the path being written and the space it needed."""

    exit_status = 4


class ServiceError(InfrastructureError):
    """A language-model server that kept failing, answered with something that is not its API's answer, or went
    silent, after every retry its settings allow; the message names the model, the server and the last status."""

    exit_status = 5


class Stopped(InfrastructureError):
    """Work that saved its state and stopped before the end of its time (its SLURM job's limit near, a warning
    signal, scancel or a pre-empting job); the same command, or the scheduler's retry, resumes from the state."""

    exit_status = 6


def exit_status(err: BaseException) -> int:
    """The exit status a command or a workflow job ends with for `err`: 2 for input the user can fix, the fault's
    own for an infrastructure fault."""
    return err.exit_status if isinstance(err, InfrastructureError) else 2
