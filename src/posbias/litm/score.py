"""Scoring a predictions file in the authors' layout (spec §4, §2.5): QA records (`answers`, `model_answer`)
get `metric_best_subspan_em` and the diagnostic `empty_first_line`; KV records (`value`, `model_answer`) get
`metric_accuracy` and the diagnostic `metric_strict_accuracy`. Files with only the authors' fields work: the
example id falls back to the line's index, the gold index to the gold document's (or target pair's) place in the
prompt, and the size to the number of documents (or pairs). KV results are `metric_accuracy`, the key the
authors' KV evaluator logs, although their EXPERIMENTS.md labels them "best_subspan_em" (quirk 5).
"""

from __future__ import annotations

import copy
import os
from typing import Mapping

import pandas as pd

from posbias.errors import InputError
from posbias.io import FormatError, json_objects, nonempty, write_jsonl
from posbias.reading.metric import best_subspan_em, empty_first_line, kv_accuracy, kv_strict_accuracy
from posbias.reading.qa_data import gold_position

METRIC = {"qa": "metric_best_subspan_em", "kv": "metric_accuracy"}


def task_of(record: Mapping) -> str:
    """`qa` for a record with `answers`, `kv` for one with `value`."""
    if "answers" in record:
        return "qa"
    if "value" in record:
        return "kv"
    raise InputError('a prediction needs "answers" (QA) or "value" (key-value retrieval)')


def score_record(record: Mapping, task: str, lstrip_first: bool = False) -> dict:
    """The metric fields of one prediction record."""
    answer = record.get("model_answer")
    if not isinstance(answer, str):
        raise InputError(f'"model_answer" must be a string, not {answer!r}')
    if task == "qa":
        answers = record.get("answers")
        if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
            raise InputError(f'"answers" must be a non-empty list of strings, not {answers!r}')
        return {"metric_best_subspan_em": best_subspan_em(answer, answers, lstrip_first),
                "empty_first_line": empty_first_line(answer)}
    value = record.get("value")
    if not isinstance(value, str) or not value:
        raise InputError(f'"value" must be a non-empty string, not {value!r}')
    return {"metric_accuracy": kv_accuracy(answer, value), "metric_strict_accuracy": kv_strict_accuracy(answer, value)}


def _position(record: Mapping, task: str) -> tuple[int | None, int]:
    """(gold index, number of items) as recorded, else read from the prompt's documents or pairs."""
    if task == "qa":
        items = record.get("model_documents", record.get("ctxs")) or []
        found = gold_position(items)
    else:
        items = record.get("model_ordered_kv_records", record.get("ordered_kv_records")) or []
        target = [record.get("key"), record.get("value")]
        found = items.index(target) if target in items else None
    gold = record["gold_index"] if "gold_index" in record else found
    return gold, int(record.get("n_items", len(items)))


def score_file(path: str | os.PathLike, out: str | os.PathLike | None = None, task: str | None = None,
               lstrip_first: bool = False) -> pd.DataFrame:
    """Score every prediction of `path`, write the scored records to `out` (if given) and return one row per
    example: `example_id`, `example_index`, `gold_index`, `n_items`, `score` and `correct`, plus the
    diagnostic (`empty_first_line` or `strict`). `task` (qa or kv) is read from the first record if not given."""
    scored, rows = [], []
    for index, (line_no, record) in enumerate(json_objects(path)):
        try:
            task = task or task_of(record)
            if task not in METRIC:
                raise InputError(f"task must be one of {tuple(METRIC)}, got {task!r}")
            metrics = score_record(record, task, lstrip_first)
        except InputError as err:
            raise FormatError(path, line_no, str(err)) from None
        scored.append({**copy.deepcopy(record), **metrics})
        gold, n_items = _position(record, task)
        value = metrics[METRIC[task]]
        row = {"example_id": str(record.get("example_id", record.get("id", index))), "example_index": index,
               "gold_index": gold, "n_items": n_items, "score": value, "correct": value == 1.0}
        if task == "qa":
            row["empty_first_line"] = metrics["empty_first_line"]
        else:
            row["strict"] = metrics["metric_strict_accuracy"] == 1.0
        rows.append(row)
    nonempty(scored, path, "predictions")
    if out is not None:
        write_jsonl(out, scored)
    frame = pd.DataFrame(rows)
    frame["gold_index"] = frame["gold_index"].astype("Int64")
    return frame
