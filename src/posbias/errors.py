"""The one exception type for input that a user can fix.

An `InputError` says that a file, a command-line flag or a config key cannot be used, and its message names
it: `path:line: ...` for a line of a file, the flag, or the config key path (`models.maxp.args.stride`). The
`posbias` command prints such an error (and an `OSError`: a missing or unreadable path) as one line and exits
with status 2; every other exception is a bug and keeps its traceback.

It is a `ValueError`, so code that catches bad values keeps working. Readers raise `posbias.io.FormatError`
for a malformed line and collection sources `posbias.data.sources.SourceError`; both are `InputError`s.
"""

from __future__ import annotations


class InputError(ValueError):
    """Input a user can fix (a file, a flag, a config key); the message names it."""


def first_line(err: BaseException) -> str:
    """The first line of an exception's message (a library's may span several), or its type's name."""
    lines = str(err).strip().splitlines()
    return lines[0].strip() if lines else type(err).__name__
