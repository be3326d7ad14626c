"""The judgment records Shi et al. released with "Judging the Judges" (github.com/Slimshilin/Position-Bias-Analyzer,
`judgment_data/`), read as `posbias.judges.records` judgments, and the figures the authors' pipeline printed beside
them.

The release (its MIT-licensed repository; fetch it yourself, e.g. `git clone`) holds one directory per benchmark,
set and judge:

    judgment_data/data_<MTBench|DevBench>_<position_bias|repetition>/<prefix>_record0_<judge>_<options>/

- `<options>` is the answer options the judge had: 3 on MT-Bench (A better, B better, C a tie), 2 on DevBench
  (whose prompt still lets a judge answer C or D, both bad);
- `record_<judge>_<options>.tsv`: every comparison (`cmp_index` = `question;model A;model B`, the question, both
  answers, `task`) with the judge's full answer in the column named after the judge; `EM` marks a pair of
  identical answers, never sent to the judge. Where the repository lacks this file (too large for its Git
  storage), `tmp.pkl` holds the same answers as a pickled dict `cmp_index -> answer` (read here by an unpickler
  that refuses every object but plain containers and strings: a pickle can run code);
- `log.txt`: what the authors' pipeline printed, among it "K out of N answers are consistent", the figure the
  reproduction table checks (`posbias.judges.reproduction`);
- the repetition sets are `Repetition<1|2|3>-...` directories: the same sampled comparisons judged three times;
- `QA_data/full_data/<benchmark>/*.xlsx` (beside `judgment_data/`): the benchmark's questions, one row per
  question with its `index` (the question of a `cmp_index`) and `task`, which gives a `tmp.pkl` run its tasks
  (read with pandas' `read_excel`, which needs openpyxl: `pip install 'posbias[judges]'`).

Every comparison pairs a model with the benchmark's reference (vicuna-13b-v1.3 on MT-Bench, the human answer on
DevBench): the other model is the comparison's subject, Shi et al.'s "model of interest". A verdict is read from
the answer as the authors did: the first `[[A]]`-style tag on MT-Bench, the first `Choice: A` (or its Chinese
form) on DevBench; A is the first-read answer, B the second, C a tie, D neither; an answer with none is unread.
"""

from __future__ import annotations

import io
import logging
import pickle
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from posbias.errors import InputError
from posbias.judges.records import Judgment

REFERENCE = {"MTBench": "vicuna-13b-v1.3", "DevBench": "human"}
VERDICT_PATTERNS = {"MTBench": re.compile(r"\[\[([ABCD])\]\]"), "DevBench": re.compile(r"(?:选择：|Choice: )([ABCD])")}
LETTERS = {"A": "first", "B": "second", "C": "tie", "D": "neither"}
_DIRECTORY = re.compile(r"^(?:Repetition(?P<repetition>\d+)-)?.*_record0_(?P<judge>.+)_(?P<options>\d)$")
_CONSISTENT_LINE = re.compile(r"(\d+) out of (\d+) answers are consistent")
_EXTRACTED_LINE = re.compile(r"Extracted (\d+) answers from the responses")
EXACT_MATCH = "EM"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReleasedRun:
    """One directory of the release: a judge's answers on one benchmark's set (one repetition of it)."""
    benchmark: str
    set: str  # position_bias or repetition
    judge: str
    repetition: int
    directory: Path


def runs(release: str | Path) -> Iterator[ReleasedRun]:
    """Every judge's directory under the release's `judgment_data/` (the repository's root or that folder)."""
    root = Path(release)
    root = root / "judgment_data" if (root / "judgment_data").is_dir() else root
    folders = sorted(root.glob("data_*_*"))
    if not folders:
        raise InputError(f"{release}: no data_<benchmark>_<set> folders (the release's judgment_data/)")
    for folder in folders:
        benchmark, _, judgment_set = folder.name[len("data_"):].partition("_")
        if benchmark not in REFERENCE:
            continue
        for directory in sorted(path for path in folder.iterdir() if path.is_dir()):
            match = _DIRECTORY.match(directory.name)
            if match:
                yield ReleasedRun(benchmark, judgment_set, match["judge"], int(match["repetition"] or 1) - 1,
                                  directory)


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise InputError(f"a released answers pickle names {module}.{name}; only plain dicts of strings are read")


def has_answers(run: ReleasedRun) -> bool:
    return any(run.directory.glob("record_*.tsv")) or (run.directory / "tmp.pkl").exists()


def answers(run: ReleasedRun) -> tuple[dict[str, str], dict[str, str]]:
    """The judge's answer per `cmp_index`, and its task where the file names one: from the record TSV (read once),
    else from tmp.pkl (answers only)."""
    import pandas as pd

    records = sorted(run.directory.glob("record_*.tsv"))
    if records:
        frame = pd.read_csv(records[0], sep="\t", dtype=str, keep_default_na=False)
        if "cmp_index" not in frame or run.judge not in frame:
            raise InputError(f"{records[0]}: expected columns cmp_index and {run.judge!r}")
        tasks = dict(zip(frame["cmp_index"], frame["task"])) if "task" in frame else {}
        return dict(zip(frame["cmp_index"], frame[run.judge])), tasks
    pickled = run.directory / "tmp.pkl"
    if not pickled.exists():
        raise InputError(f"{run.directory}: neither a record_*.tsv nor tmp.pkl (is the release's copy complete? "
                         f"its large files may be Git LFS pointers)")
    loaded = _PlainUnpickler(io.BytesIO(pickled.read_bytes())).load()
    if not isinstance(loaded, dict) or not all(isinstance(key, str) and isinstance(value, str)
                                               for key, value in loaded.items()):
        raise InputError(f"{pickled}: expected a dict of cmp_index -> answer text")
    return loaded, {}


def question_tasks(release: str | Path, benchmark: str) -> dict[str, str]:
    """The task of every question of the benchmark (`index` -> `task`), from the release's question tables (every
    `QA_data/full_data/<benchmark>/*.xlsx`); empty, with a warning, where the copy has none (its runs then keep the
    tasks their own files name, if any). These tables hold the position-bias sets' questions; the repetition sets'
    sampled questions come with their record TSVs."""
    import pandas as pd

    root = Path(release)
    root = root.parent if root.name == "judgment_data" else root
    tables = sorted((root / "QA_data" / "full_data" / benchmark).glob("*.xlsx"))
    if not tables:
        log.warning("%s: no QA_data/full_data/%s/*.xlsx beside judgment_data/; runs without a record TSV get no "
                    "tasks", release, benchmark)
    tasks: dict[str, str] = {}
    for table in tables:
        try:
            frame = pd.read_excel(table, dtype=str)
        except ImportError:
            raise InputError(f"{table}: reading the release's question table needs openpyxl: "
                             f"pip install 'posbias[judges]' (or pip install openpyxl)") from None
        if not {"index", "task"} <= set(frame.columns):
            raise InputError(f"{table}: expected columns index and task, found {', '.join(map(str, frame.columns))}")
        tasks.update(zip(frame["index"].str.strip(), frame["task"].fillna("").str.strip()))
    return tasks


def read_verdict(answer: str, benchmark: str) -> str | None:
    """The verdict the answer gives (first, second, tie, neither), None when it gives none."""
    found = VERDICT_PATTERNS[benchmark].search(answer)
    return LETTERS[found.group(1)] if found else None


def judgments(run: ReleasedRun, question_task: dict[str, str] | None = None) -> list[Judgment]:
    """The run's judgments: one per answered comparison (identical-answer pairs, never judged, are left out); the
    task from the run's record TSV, else from `question_task` (`question_tasks`; a question it lacks is logged and
    gets no task). Every comparison pairs a model with the benchmark's reference, as the authors' analysis assumes
    (the subject is the other model); one that does not is refused."""
    reference = REFERENCE[run.benchmark].lower()
    answered, task_of = answers(run)
    question_task = question_task or {}
    found = []
    untasked = set()
    for cmp_index, answer in answered.items():
        if answer == EXACT_MATCH:
            continue
        parts = cmp_index.split(";")
        if len(parts) != 3:
            raise InputError(f"{run.directory}: cmp_index {cmp_index!r} is not question;model A;model B")
        question, first, second = parts
        if reference not in (first.lower(), second.lower()):
            raise InputError(f"{run.directory}: cmp_index {cmp_index!r} does not compare with the reference "
                             f"{REFERENCE[run.benchmark]!r}")
        subject = second if first.lower() == reference else first
        task = task_of.get(cmp_index) or question_task.get(question, "")
        if not task and question_task:
            untasked.add(question)
        found.append(Judgment(run.judge, question, first, second, subject, read_verdict(answer, run.benchmark),
                              run.repetition, task))
    if untasked:
        log.warning("%s: %d questions in no question table (e.g. %s); their judgments have no task", run.directory,
                    len(untasked), min(untasked))
    return found


def printed_consistency(run: ReleasedRun) -> tuple[int, int] | None:
    """(consistent answers, extracted answers) as the authors' log printed them; every extracted answer counts as
    consistent when the log prints no such line (their pipeline prints it only when some answer is not)."""
    log = run.directory / "log.txt"
    if not log.exists():
        return None
    text = log.read_text(encoding="utf-8", errors="replace")
    consistent = _CONSISTENT_LINE.search(text)
    if consistent:
        return int(consistent.group(1)), int(consistent.group(2))
    extracted = _EXTRACTED_LINE.search(text)
    return (int(extracted.group(1)),) * 2 if extracted else None


def released_consistent_answers(found: list[Judgment]) -> tuple[int, int]:
    """(consistent answers, read answers) as the authors' pipeline counts them, on answers, not pairs: a read
    answer is consistent when its swapped twin prefers the same answer (or both tie, or both say neither), and
    also when its twin was left unread (their `find_inconsistent` keeps an answer without a twin as consistent);
    written here from that behaviour so that the reproduction compares like with like."""
    read = {(judgment.question, judgment.first, judgment.second): judgment.choice for judgment in found
            if judgment.choice is not None}
    mirrored = {"first": "second", "second": "first", "tie": "tie", "neither": "neither"}
    consistent = sum(1 for (question, first, second), choice in read.items()
                     if (question, second, first) not in read or read[(question, second, first)] == mirrored[choice])
    return consistent, len(read)
