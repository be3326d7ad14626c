"""What the commands' flags share (`posbias.cli` and each stage's `cli`): numeric flag types
that name the flag in their error, input paths checked before any work starts, and the config loaded as the
workflow loads it."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from posbias.errors import InputError

SEED_LIMIT = 2**32 - 1  # NumPy's seeds are 32-bit


# --- flags -------------------------------------------------------------------------------------------

def integer(low: int, high: int | None = None):
    """An argparse `type`: an integer in [low, high]; argparse names the flag in its error."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low or (high is not None and value > high):
            span = f"at least {low}" if high is None else f"from {low} to {high}"
            raise argparse.ArgumentTypeError(f"must be an integer {span}, got {value}")
        return value
    return parse


def number(low: float, high: float | None = None, low_open: bool = False):
    """An argparse `type`: a finite number in [low, high] (or (low, high] with `low_open`)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        below = value <= low if low_open else value < low
        if not math.isfinite(value) or below or (high is not None and value > high):
            span = f"{'(' if low_open else '['}{low}, {'inf)' if high is None else f'{high}]'}"
            raise argparse.ArgumentTypeError(f"must be a number in {span}, got {text}")
        return value
    return parse


def word(text: str) -> str:
    if not text or any(ch.isspace() for ch in text):
        raise argparse.ArgumentTypeError(f"must be one non-empty word (a run's last column), got {text!r}")
    return text


POSITIVE = integer(1)
SEED = integer(0, SEED_LIMIT)


def reads(parser: argparse.ArgumentParser, flag: str, kind: str = "file", **options) -> None:
    """Add `flag`, a path the command reads (`kind`: file or directory); it must exist before any work starts,
    so that a typo costs no JVM or model start and the error names the flag."""
    parser.add_argument(flag, **options)
    parser.set_defaults(reads={**(parser.get_default("reads") or {}), flag: kind})


def check_reads(args) -> None:
    for flag, kind in (getattr(args, "reads", None) or {}).items():
        value = getattr(args, flag.lstrip("-").replace("-", "_"))
        for path in value if isinstance(value, list) else [value]:
            if path is None:
                continue
            if not Path(path).exists():
                raise InputError(f"{flag} {path}: no such {kind}")
            if (kind == "directory") != Path(path).is_dir():
                raise InputError(f"{flag} {path}: not a {kind}")


# --- config ------------------------------------------------------------------------------------------

def read_config(path: str) -> dict:
    """The config file through `posbias.config` (the layer the workflow uses: its `base:` files, the schema
    with defaults filled in, every cross-check), as a mapping; its warnings go to stderr. A problem is an
    `InputError` naming the file and the key."""
    return read_config_object(path).data


def read_config_object(path: str):
    """`read_config`, as the `posbias.config.Config` the workflow derives its jobs from."""
    from posbias.config import ConfigError, load_config

    if not Path(path).is_file():
        raise InputError(f"--config {path}: no such file")
    try:
        config = load_config(path)
    except ConfigError as err:
        message = str(err)
        raise InputError(message if message.startswith(str(path)) else f"{path}: {message}") from None
    for warning in config.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return config


def required_section(config: dict, key: str, path: str) -> dict:
    """A top-level section the schema lets a config leave out but this command needs."""
    if key not in config:
        raise InputError(f"{path}: no {key} section")
    return config[key]


def named_block(config: dict, section: str, name: str, path: str, flag: str) -> dict:
    """`config[section][name]`, the block a flag names; a name the config lacks is an error listing the known."""
    known = config.get(section) or {}
    if name not in known:
        raise InputError(f"{flag} {name}: {path} has no {section}.{name}; known: {', '.join(sorted(known)) or 'none'}")
    return known[name]


def add_command(commands, name: str, handler, usage_check=None, **options) -> argparse.ArgumentParser:
    """`posbias <name>`: a command whose parsed flags go to `handler(args)`. `usage_check(args)` returns what
    argparse cannot express (a combination of flags) as a message, refused as argparse refuses the rest (usage,
    exit status 2), or None."""
    parser = commands.add_parser(name, **options)
    parser.set_defaults(handler=handler, usage_check=usage_check, command_parser=parser)
    return parser


def add_stage(commands, name: str, help: str, handler):
    """`posbias <name>`, a stage's command with its own subcommands (`<name>_command`): returns their subparsers."""
    stage = commands.add_parser(name, help=help)
    stage.set_defaults(handler=handler)
    return stage.add_subparsers(dest=f"{name.replace('-', '_')}_command", required=True)
