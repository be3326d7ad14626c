"""Position consistency and preference fairness aggregated as Shi et al.'s released analysis aggregates them for the
paper's tables ("Judging the Judges", arXiv 2406.07791; `consistency_preference_calculation.py` in
github.com/Slimshilin/Position-Bias-Analyzer): per judge, over the cells (subject, task) of one benchmark.

`posbias.judges.metrics` pools every comparison of a judge; the authors' figures differ in three ways, kept here so
that our numbers can stand beside the paper's:

- **PC** is pooled too (consistent / counted pairs over the whole benchmark), and its spread is the population
  standard deviation of the cells' PCs, where a cell without a counted pair has PC 0;
- **PF** is the *mean over cells* of each cell's raw score (recency - primacy) divided by the cell's largest
  possible score, which the authors take as the judge's comparisons of the cell's task divided by the number of
  subjects of the benchmark (every subject assumed to have the same number), not the cell's own count; its
  spread is the population standard deviation over the cells;
- a pair counts as consistent only for (first, second), (second, first) or (tie, tie): "neither" both times
  (DevBench's option D) counts in no metric, where `metrics` counts it as consistent.

A comparison counts towards its task's comparisons when both its askings are present, whether or not a verdict
was read from them; its read and unread verdicts make the extraction rate (a pair with one unread verdict counts
one failure and no success, as the authors count it). The cells are every subject times every task found among
all the judgments given, an asking without its twin included (the authors pass every judge of a benchmark
together): pass one benchmark's judgments, of one repetition.

Two differences remain, neither met in the release's stored copy (no identical-answer pair, no missing asking):
the authors' analysis reads an identical-answer pair (`EM`, never sent to the judge, left out of the records) and
an asking missing for one judge as unread comparisons, counting them among the task's comparisons and as
extraction failures; here neither is a comparison.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Sequence

import numpy as np

from posbias.errors import InputError
from posbias.judges.metrics import choice_pairs, pair_kind
from posbias.judges.records import Judgment

COLUMNS = ("judge", "position_consistency", "position_consistency_std", "preference_fairness",
           "preference_fairness_std", "extraction_rate", "n_pairs", "n_cells")


def _kind(first_choice: str | None, second_choice: str | None) -> str | None:
    """The pair's kind as the authors count it (None: counted in no metric)."""
    if (first_choice, second_choice) == ("neither", "neither"):
        return None
    kind = pair_kind(first_choice, second_choice)
    return kind if kind in ("consistent", "primacy", "recency") else None


def judge_cell_averages(judgments: Sequence[Judgment]) -> list[dict]:
    """One row per judge (sorted): the `COLUMNS`, aggregated as the module docstring says."""
    repetitions = sorted({judgment.repetition for judgment in judgments})
    if len(repetitions) > 1:  # the authors aggregate each run on its own; pooled runs would count pairs 3 times
        raise InputError(f"the authors' aggregation takes one repetition at a time, got repetitions {repetitions}")
    subjects = sorted({judgment.subject for judgment in judgments})
    tasks = sorted({judgment.task for judgment in judgments})
    by_judge: dict = defaultdict(list)
    for judgment in judgments:
        by_judge[judgment.judge].append(judgment)

    rows = []
    for judge, own in sorted(by_judge.items()):
        cells: dict = defaultdict(Counter)  # (subject, task) -> counts of consistent, primacy, recency
        task_pairs: Counter = Counter()
        read = unread = 0
        for pair in choice_pairs(own):
            if pair.subject_first is None or pair.subject_second is None:
                continue  # the authors' analysis skips a comparison whose swapped asking is missing
            one, other = pair.subject_first.choice, pair.subject_second.choice
            cell = (pair.subject_first.subject, pair.subject_first.task)
            task_pairs[cell[1]] += 1
            failures = (one is None) + (other is None)
            unread += failures
            read += 0 if failures else 2
            kind = _kind(one, other)
            if kind:
                cells[cell][kind] += 1

        consistencies, fairnesses = [], []
        for subject in subjects:
            for task in tasks:
                counts = cells[(subject, task)]
                total = counts["consistent"] + counts["primacy"] + counts["recency"]
                consistencies.append(counts["consistent"] / total if total else 0.0)
                # the largest possible |raw score| of a cell: the task's comparisons shared among the subjects
                largest = task_pairs[task] / len(subjects)
                fairnesses.append((counts["recency"] - counts["primacy"]) / largest if largest else 0.0)
        counted = sum(sum(counts.values()) for counts in cells.values())
        rows.append({
            "judge": judge,
            "position_consistency": (sum(counts["consistent"] for counts in cells.values()) / counted
                                     if counted else 0.0),
            "position_consistency_std": float(np.std(consistencies)),
            "preference_fairness": float(np.mean(fairnesses)),
            "preference_fairness_std": float(np.std(fairnesses)),
            "extraction_rate": read / (read + unread) if read + unread else 0.0,
            "n_pairs": sum(task_pairs.values()),
            "n_cells": len(consistencies),
        })
    return rows
