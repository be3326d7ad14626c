"""The `posbias` command line: every step of the workflow by hand.

Every stage has its commands in its folder's `cli.py` (`posbias/data/cli.py`, `posbias/sweep/cli.py`, ...), found
through the stages' registry (`posbias.config.registry.STAGES`). A command takes the
arguments the workflow's job gets from the same config accessors the rules call, so by hand it writes what the
job writes; docs/architecture.md's rule map names the command of every rule.

    posbias generate --config config.yaml --out results/data/synthetic --passages results/data/synthetic-passages
    posbias fetch --config config/paper/robust04.yaml --collection robust04 --out docs.jsonl
    posbias fetch --config config/paper/robust04.yaml --queryset robust04_desc --out q.tsv --qrels qrels.txt
    posbias truncate --docs docs.jsonl --out docs.truncated.jsonl --tokenizer bert-base-uncased --max-tokens 1431
    posbias index --docs docs.jsonl --index idx/ [--expansions d2q.jsonl.gz] --threads 8
    posbias retrieve --index idx/ --queries q.tsv --run cand.run --depth 100
    posbias dense-index --config config.yaml --retriever hybrid --docs docs.jsonl --index dense/
    posbias hybrid --config config.yaml --retriever hybrid --dense dense/ --index idx/ --queries q.tsv --run cand.run
    posbias tokenize --docs docs.jsonl --tokenizer bert-base-uncased --cap 1431 --out tokens/
    posbias train --config config.yaml --model maxp --seed 1 --tokens tokens/ --queries ... --qrels ... --candidates ... --out ckpt/
    posbias rerank --checkpoint ckpt/ --tokens tokens/ --queries ... --candidates ... --run out.run
    posbias rerank --model longp_rankgpt --config config.yaml --docs docs.jsonl --queries ... --candidates ...
        --run out.run          (RankGPT: document texts, answers through the config's llm.cache)
    posbias finetune --config config.yaml --model maxp --seed 1 --init ckpt/ ... --rerank TOKENS QUERIES CANDIDATES RUN
    posbias cross-validate fold|merge|checkpoint ...   (a cross-validated query set, fold by fold)
    posbias evaluate --qrels qrels.txt --run out.run --metric RR@10 --metric nDCG@10
    posbias compare --qrels qrels.txt --run a.run --run b.run --metric RR@10 [--json]
    posbias study combine-seeds|table|outcomes|first-stage|collection-stats|queryset-stats|dataset-tables|table11|
        farrelevant-figure|efficiency-figure ...     (the study's report)
    posbias litm build|run|score ...                 posbias probes build|score|report|rag ...
    posbias positions locate|report ...              posbias sweep build|report|breakdown ...
    posbias provenance [--config config.yaml] [--write]
    posbias regress --results results --expected config/regression/demo.yaml [--write-expected]
    posbias regress --results seed1 seed2 seed3 --expected config/regression/seeds.yaml --write-expected
    posbias regress --reproduction --config config/paper/study.yaml [--results results/study]

Each module's docstring has its commands' examples; `posbias <command> --help` every flag.

Bad input is reported as one line, `posbias <command>: error: <message>`, that names the file (and line),
the flag or the config key, with exit status 2 and no traceback: a missing, empty, malformed, binary,
truncated or mislabelled compressed file; a document missing from a token store or index; a missing or
incomplete index, token store or checkpoint; a config that is not valid YAML or breaks its schema, or lacks
the named model, retriever, collection or query set. Numeric flags out of range are refused by the argument
parser, naming the flag. Every output file or directory is written atomically, so a failed command leaves
none behind. An empty qrels, run, candidates or queries file is an error, and so is a run none of whose
queries is judged; any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys

from posbias.command_flags import check_reads
from posbias.errors import InfrastructureError, InputError, exit_status, first_line, one_line


def parser() -> argparse.ArgumentParser:
    """Every stage's commands (its folder's `cli.py`), in the order of the stages' registry
    (`posbias.config.registry.STAGES`), so no list here names a stage's commands."""
    from posbias.config.registry import stage_modules

    command_line = argparse.ArgumentParser(prog="posbias", description=__doc__.split("\n")[0])
    commands = command_line.add_subparsers(dest="command", required=True)
    for module in stage_modules("cli"):
        importlib.import_module(module).register(commands)
    return command_line


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    # Combinations argparse cannot express, refused the way it refuses the rest (usage, exit status 2).
    problem = args.usage_check(args) if getattr(args, "usage_check", None) else None
    if problem:
        args.command_parser.error(problem)

    from posbias.logs import job_log

    with job_log(None), _user_errors(args.command):
        check_reads(args)
        return args.handler(args) or 0


@contextlib.contextmanager
def _user_errors(command: str):
    """Input the user can fix (`InputError`: a malformed, missing or empty input, a bad config key) and the file
    system refusing a path (`OSError`) are one line on stderr and argparse's exit status 2, no traceback; an
    infrastructure fault (`InfrastructureError`: a full disk, a failing server) is one line with its own status.
    Other exceptions are bugs and propagate with theirs."""
    try:
        yield
    except (InputError, InfrastructureError) as err:
        _fail(command, str(err), exit_status(err))
    except OSError as err:
        path = err.filename2 or err.filename  # a rename's second name is the output, its first a hidden temporary
        _fail(command, f"{path}: {err.strerror}" if path and err.strerror else first_line(err), 2)


def _fail(command: str, message: str, status: int):
    print(f"posbias {command}: error: {one_line(message)}", file=sys.stderr)
    raise SystemExit(status) from None


if __name__ == "__main__":
    sys.exit(main())
