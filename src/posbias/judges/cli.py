"""`posbias judges`: the Judging-the-Judges release converted into records, and the reproduction table.

    posbias judges convert --release Position-Bias-Analyzer/ --out records/     (one records file per benchmark, set)
    posbias judges reproduce --out results/judges/reproduction                 (.csv, .md: printed vs reproduced)
    posbias judges reproduce --records records/ --reference config/reference/judging_the_judges.yaml --out ...

A judge is audited as any other model: `posbias audit --model "judge-replay:FILE?judge=gpt-4-0613"` (recorded
judgments) or `--model judge:BACKEND:MODEL` (a live one; `posbias.audit.judge_battery`).
"""

from __future__ import annotations

from posbias.command_flags import POSITIVE, SEED, add_command, add_stage, reads


def register(commands) -> None:
    judges = add_stage(commands, "judges", help="LLM judges' position bias: the Judging-the-Judges release as "
                                                "records, and its reproduction table", handler=None)
    convert = add_command(judges, "convert", convert_command,
                          help="the release's judgment_data/ as records files (one per benchmark and set)")
    reads(convert, "--release", "directory", required=True,
          help="a clone of github.com/Slimshilin/Position-Bias-Analyzer (or its judgment_data/)")
    convert.add_argument("--out", required=True, help="directory of the records files")
    reproduce = add_command(judges, "reproduce", reproduce_command,
                            help="the printed figures against the same figures recomputed from the records")
    reads(reproduce, "--records", "directory", default=None,
          help="directory of records files (default: the ones shipped with the package)")
    reads(reproduce, "--reference", default=None,
          help="the printed figures (default: the workflow's config/reference/judging_the_judges.yaml)")
    reproduce.add_argument("--out", required=True, help="path stem of the table: OUT.csv and OUT.md")
    reproduce.add_argument("--resamples", type=POSITIVE, default=1000, help="bootstrap resamples of the intervals")
    reproduce.add_argument("--seed", type=SEED, default=0)


def convert_command(args) -> None:
    from posbias.judges.reproduction import convert

    written, missing = convert(args.release, args.out)
    for name, count in written.items():
        print(f"{args.out}/{name}: {count} judgments")
    if missing:
        print(f"{len(missing)} runs without their answers in this copy of the release (skipped; see the log)")


def reproduce_command(args) -> None:
    from posbias.judges.reproduction import (REFERENCE, RELEASED, cell_average_rows, reproduction_rows,
                                             write_reproduction)
    from posbias.workflow import workflow_root

    records, reference = args.records or RELEASED, args.reference or workflow_root() / REFERENCE
    rows = reproduction_rows(records, reference, args.resamples, args.seed)
    averages = cell_average_rows(records, reference)
    for path in write_reproduction(rows, args.out, averages):
        print(path)
    checked = [row for row in rows if row["match"] is not None]
    print(f"{sum(bool(row['match']) for row in checked)} of {len(checked)} recomputable printed figures reproduced "
          f"({len(rows) - len(checked)} without released judgments)")
    compared = [row[key] for row in averages for key in ("pc_within_rounding", "pf_within_rounding")
                if row.get(key) is not None]
    typed = sum(row.get(key) is not None for row in averages
                for key in ("paper_position_consistency", "paper_preference_fairness"))
    print(f"{sum('n_pairs' in row for row in averages)} judges aggregated as the paper aggregates; "
          + (f"{sum(compared)} of the {len(compared)} recomputable paper figures ({typed} typed in) within their "
             f"rounding" if typed else "no paper figure typed in to compare (config: paper)"))
