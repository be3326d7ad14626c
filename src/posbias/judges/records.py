"""The judgment record: one judge's verdict on one ordered pair of candidates, the format every judge audit reads
and writes (a live judge's answers, a replay of recorded ones, the Judging-the-Judges release converted).

A records file is JSON lines (`.gz`, `.bz2`, `.xz` read transparently), one judgment per line:

    {"judge": "gpt-4-0613", "question": "81", "first": "baize-v2-13b", "second": "vicuna-13b-v1.3",
     "subject": "baize-v2-13b", "choice": "first", "repetition": 0, "task": "writing"}

- `question`: what the candidates answer; the judgments of one question form a cluster (its pairs share the
  question's difficulty), which the intervals resample whole (`posbias.judges.metrics`);
- `first`, `second`: the candidates in the order the judge read them; the same pair in the other order is the
  same comparison asked the other way round;
- `subject`: the candidate whose wins the position curve counts (the better answer where it is known, else the
  candidate compared with a fixed reference: Shi et al.'s "model of interest"); one of `first`, `second`;
- `choice`: `first`, `second`, `tie` (a draw: MT-Bench's option C), `neither` (both bad: DevBench's option D), or
  null where no verdict could be read from the judge's answer (kept: it counts against extraction, not for
  either candidate);
- `repetition` (default 0): which of several identical askings; `task` (optional) the question's task;
- `judge`: who judged; a file may hold several judges, and a replay names the one it audits.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from posbias.errors import InputError
from posbias.io import FormatError, json_objects, write_jsonl

CHOICES = ("first", "second", "tie", "neither")
REQUIRED = ("judge", "question", "first", "second", "subject", "choice")


@dataclass(frozen=True)
class Judgment:
    judge: str
    question: str
    first: str
    second: str
    subject: str
    choice: str | None
    repetition: int = 0
    task: str = ""

    @property
    def pair(self) -> tuple[str, str, str]:
        """The comparison, whatever the order: its question and its two candidates, sorted."""
        return (self.question, *sorted((self.first, self.second)))

    @property
    def subject_slot(self) -> int:
        """Where the subject was read: 0 first, 1 second."""
        return 0 if self.subject == self.first else 1

    @property
    def subject_wins(self) -> float | None:
        """1 when the subject was preferred, 0 when the other candidate was, 0.5 for a tie or neither; None without
        a verdict."""
        if self.choice is None:
            return None
        if self.choice in ("tie", "neither"):
            return 0.5
        return 1.0 if ("first", "second")[self.subject_slot] == self.choice else 0.0


def _judgment(record: dict, path, line_no: int) -> Judgment:
    missing = [key for key in REQUIRED if key not in record]
    if missing:
        raise FormatError(path, line_no, f"a judgment needs {', '.join(missing)}")
    if record["choice"] is not None and record["choice"] not in CHOICES:
        raise FormatError(path, line_no, f"choice {record['choice']!r} is not one of {', '.join(CHOICES)} or null")
    if record["first"] == record["second"]:
        raise FormatError(path, line_no, f"first and second are the same candidate {record['first']!r}")
    if record["subject"] not in (record["first"], record["second"]):
        raise FormatError(path, line_no, f"subject {record['subject']!r} is neither first nor second")
    repetition = record.get("repetition", 0)
    if not isinstance(repetition, int) or isinstance(repetition, bool) or repetition < 0:
        raise FormatError(path, line_no, f"repetition must be a whole number, 0 or more, got {repetition!r}")
    return Judgment(str(record["judge"]), str(record["question"]), str(record["first"]), str(record["second"]),
                    str(record["subject"]), record["choice"], repetition, str(record.get("task") or ""))


def read_judgments(path: str | Path, judge: str | None = None) -> list[Judgment]:
    """The judgments of a records file (those of `judge` where it names one); a malformed line is one error naming
    the file and line, a file with several judges and none chosen is refused."""
    found = [_judgment(record, path, line_no) for line_no, record in json_objects(path)]
    judges = sorted({judgment.judge for judgment in found})
    if judge is None and len(judges) > 1:
        raise InputError(f"{path}: holds the judgments of {len(judges)} judges ({', '.join(judges)}); name one "
                         f"(judge=...)")
    chosen = [judgment for judgment in found if judge is None or judgment.judge == judge]
    if not chosen:
        raise InputError(f"{path}: no judgments{f' of judge {judge!r}' if judge else ''}"
                         f"{'; it holds ' + ', '.join(judges) if judges else ''}")
    _check_duplicates(chosen, path)
    return chosen


def judgments_by_judge(path: str | Path) -> dict[str, list[Judgment]]:
    """Every judge's judgments in a records file, read once (a malformed line or a repeated judgment is one error)."""
    grouped: dict[str, list[Judgment]] = {}
    for line_no, record in json_objects(path):
        judgment = _judgment(record, path, line_no)
        grouped.setdefault(judgment.judge, []).append(judgment)
    for found in grouped.values():
        _check_duplicates(found, path)
    return grouped


def _check_duplicates(judgments: Iterable[Judgment], path) -> None:
    seen = set()
    for judgment in judgments:
        key = (judgment.judge, judgment.question, judgment.first, judgment.second, judgment.repetition)
        if key in seen:
            raise InputError(f"{path}: judge {key[0]!r} judged question {key[1]!r}, {key[2]!r} before {key[3]!r}, "
                             f"repetition {key[4]} more than once")
        seen.add(key)


def write_judgments(path: str | Path, judgments: Iterable[Judgment]) -> int:
    """Write judgments as a records file (atomically); returns how many."""
    return write_jsonl(path, (asdict(judgment) for judgment in judgments))

