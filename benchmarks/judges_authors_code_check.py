"""Check `posbias.judges.cell_averages` against the analysis Shi et al. released with "Judging the Judges", run on
their own released judgments: the two must give every judge the same position consistency, preference fairness,
their standard deviations over cells, and extraction rate.

    python benchmarks/judges_authors_code_check.py --release Position-Bias-Analyzer/

`--release` is a clone of github.com/Slimshilin/Position-Bias-Analyzer (MIT). Its function
`calculate_positional_consistency_and_preference_score` (judging_the_judges/calculate_consistency_and_preference/
consistency_preference_calculation.py) is loaded from that clone at run time; nothing of it is kept here. Its input,
one frame per benchmark and set with a column `extracted_<judge>` of letters (A, B, C, D, or N where no verdict was
read), is built here from the release's answers (`posbias.judges.release`), and ours from the same answers as
records. Prints the largest difference per benchmark and set; exits 1 if any exceeds 1e-12. An identical-answer
pair (`EM`) or an asking one judge lacks is an unread comparison to the authors and no comparison to us
(`posbias.judges.cell_averages` says so): on a release holding either, the two differ by construction; the stored
copy holds neither.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import sys
from collections import defaultdict
from pathlib import Path

import pandas as pd

from posbias.judges import release
from posbias.judges.cell_averages import judge_cell_averages

AUTHORS_MODULE = ("judging_the_judges/calculate_consistency_and_preference/"
                  "consistency_preference_calculation.py")
LETTERS = {"first": "A", "second": "B", "tie": "C", "neither": "D"}
# ours -> the authors' column of the judge averages
COMPARED = {"position_consistency": "Average Positional Consistency",
            "position_consistency_std": "Positional Consistency Std",
            "preference_fairness": "Average Positional Preference Score",
            "preference_fairness_std": "Positional Preference Score Std",
            "extraction_rate": "Average Extraction Successful Rate"}
TOLERANCE = 1e-12


def authors_function(clone: Path):
    spec = importlib.util.spec_from_file_location("authors_consistency_preference", clone / AUTHORS_MODULE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.calculate_positional_consistency_and_preference_score


def both_inputs(clone: Path, benchmark: str, judgment_set: str, repetition: int):
    """(the authors' frame, our judgments) of one benchmark's set and repetition, from the same answers."""
    question_task = release.question_tasks(clone, benchmark)
    columns, task_of, ours = {}, {}, []
    for run in release.runs(clone):
        if (run.benchmark, run.set, run.repetition) != (benchmark, judgment_set, repetition):
            continue
        if not release.has_answers(run):
            continue
        answered, tasks = release.answers(run)
        columns[run.judge] = {cmp_index: LETTERS.get(release.read_verdict(answer, benchmark), "N")
                              if answer != release.EXACT_MATCH else "N" for cmp_index, answer in answered.items()}
        task_of.update(tasks or {cmp_index: question_task.get(cmp_index.split(";")[0], "") for cmp_index in answered})
        ours += release.judgments(run, question_task)
    index = sorted(set().union(*columns.values())) if columns else []
    frame = pd.DataFrame({"cmp_index": index, "task": [task_of[cmp_index] for cmp_index in index]})
    for judge, letters in columns.items():
        frame[f"extracted_{judge}"] = [letters.get(cmp_index, "N") for cmp_index in index]
    return frame, ours


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", required=True, type=Path, help="a clone of Position-Bias-Analyzer")
    args = parser.parse_args(argv)
    calculate = authors_function(args.release)
    sets = defaultdict(set)
    for run in release.runs(args.release):
        sets[(run.benchmark, run.set)].add(run.repetition)
    worst_of_all = 0.0
    for (benchmark, judgment_set), repetitions in sorted(sets.items()):
        for repetition in sorted(repetitions):
            frame, ours = both_inputs(args.release, benchmark, judgment_set, repetition)
            if frame.empty:
                continue
            with contextlib.redirect_stdout(io.StringIO()):  # the authors' progress lines
                _, theirs = calculate(frame, release.REFERENCE[benchmark].lower())
            theirs = theirs.set_index("Judge")
            mine = pd.DataFrame(judge_cell_averages(ours)).set_index("judge")
            worst = max(abs(mine.loc[judge, column] - theirs.loc[judge, authors])
                        for judge in theirs.index for column, authors in COMPARED.items())
            worst_of_all = max(worst_of_all, worst)
            print(f"{benchmark} {judgment_set} repetition {repetition + 1}: {len(theirs)} judges, "
                  f"largest |ours - authors'| {worst:.2e}")
    print(f"largest difference {worst_of_all:.2e} (tolerance {TOLERANCE:g})")
    return 0 if worst_of_all <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
