"""Helpers of the command-line tests: run `posbias` in this process and check how it fails."""

from __future__ import annotations

import pytest

from posbias.cli import main


@pytest.fixture
def input_error(capsys):
    """`input_error(argv)`: run the command, which must fail with exit status 2 and one error line on stderr,
    `posbias <command>: error: <message>`, its last (progress bars may come before it), no traceback, and
    nothing on stdout; returns the message."""
    def run(argv: list[str]) -> str:
        with pytest.raises(SystemExit) as exit_info:
            main([str(arg) for arg in argv])
        captured = capsys.readouterr()
        assert exit_info.value.code == 2, captured.err
        assert captured.out == "" and "Traceback" not in captured.err
        lines = captured.err.strip().splitlines()
        prefix = f"posbias {argv[0]}: error: "
        assert lines[-1].startswith(prefix) and sum(prefix in line for line in lines) == 1, captured.err
        return lines[-1][len(prefix):]
    return run


@pytest.fixture
def usage_error(capsys):
    """`usage_error(argv)`: run the command, which argparse must refuse (usage, exit status 2); returns the
    message of its last line `posbias <command>: error: <message>`."""
    def run(argv: list[str]) -> str:
        with pytest.raises(SystemExit) as exit_info:
            main([str(arg) for arg in argv])
        captured = capsys.readouterr()
        assert exit_info.value.code == 2 and captured.out == ""
        last = captured.err.strip().splitlines()[-1]
        assert captured.err.startswith("usage: posbias") and "Traceback" not in captured.err
        prefix = f"posbias {argv[0]}: error: "
        assert last.startswith(prefix), last
        return last[len(prefix):]
    return run
