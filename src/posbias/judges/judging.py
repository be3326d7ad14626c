"""Judges behind one interface: `judge(askings)` answers a list of askings (a question's two candidates in the
order read) with judgments (`posbias.judges.records.Judgment`), and a judge with comparisons of its own lists them
(`comparisons(settings)`: each comparison in both orders, once per repetition). A live judge asks a language model
(`posbias.llm`: any backend, through the response cache) what it is given; a replay answers from a records file
the comparisons it recorded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from posbias.errors import InputError
from posbias.judges.records import Judgment, read_judgments


@dataclass(frozen=True)
class Asking:
    """One prompt of a judge: a question and two candidates in the order read."""
    question: str
    first: str
    second: str
    subject: str
    repetition: int = 0
    question_text: str = ""
    first_text: str = ""
    second_text: str = ""


def both_orders(question: str, subject: str, other: str, texts: Mapping[str, str], question_text: str,
                repetitions: int) -> list[Asking]:
    """A comparison asked subject-first and subject-second, `repetitions` times."""
    return [Asking(question, first, second, subject, repetition, question_text, texts[first], texts[second])
            for repetition in range(repetitions) for first, second in ((subject, other), (other, subject))]


class LiveJudge:
    """A language model asked the pairwise prompt (`posbias.judges.prompts`) of each asking it is given; it has no
    comparisons of its own (the audit's judge battery asks it the embedded world's: `comparisons` is None)."""

    comparisons = None

    def __init__(self, language_model, name: str = ""):
        self.language_model, self.name = language_model, name or getattr(language_model, "name", "judge")

    @property
    def spec(self):  # what the audit records of the model (`posbias.audit.steps._language_model`)
        return self.language_model.spec

    def judge(self, askings: Sequence[Asking], max_new_tokens: int = 8, temperature: float = 0.0
              ) -> list[Judgment]:
        """Each asking's verdict. With `temperature` above 0 each repetition samples with its own seed (the
        repetition: a backend that takes seeds answers each again, and the cache keeps them apart); greedy
        decoding answers every repetition alike, so its repetition stability is 1 by construction."""
        from posbias.judges.prompts import pairwise_prompt, read_verdict
        from posbias.llm.types import Decoding, Request

        # meta (never sent): the verdict an ideal judge gives, which the mock backend's `oracle` answers
        requests = [Request(prompt=pairwise_prompt(asking.question_text, asking.first_text, asking.second_text),
                            meta={"question": asking.question, "first": asking.first,
                                  "answer": "[[A]]" if asking.first == asking.subject else "[[B]]"})
                    for asking in askings]
        texts: dict = {}
        for repetition in sorted({asking.repetition for asking in askings}):
            indices = [i for i, asking in enumerate(askings) if asking.repetition == repetition]
            decoding = Decoding(max_new_tokens=max_new_tokens, temperature=temperature,
                                seed=repetition if temperature > 0 else None)
            answered = self.language_model.generate([requests[i] for i in indices], decoding)
            texts.update(zip(indices, (completion.text for completion in answered)))
        return [Judgment(self.name, asking.question, asking.first, asking.second, asking.subject,
                         read_verdict(texts[i]), asking.repetition) for i, asking in enumerate(askings)]


RELEASED_PREFIX = "released:"  # a records file shipped with the package: released:mtbench-position-bias


def records_path(target: str) -> str:
    """A replay's records file: a path, or `released:NAME`, the package's converted Judging-the-Judges records
    (`posbias/judges/released/NAME.jsonl.gz`)."""
    if target.startswith(RELEASED_PREFIX):
        from posbias.judges.reproduction import RELEASED

        name = target[len(RELEASED_PREFIX):]
        path = RELEASED / f"{name}.jsonl.gz"
        if not path.exists():
            shipped = sorted(p.name[:-len(".jsonl.gz")] for p in RELEASED.glob("*.jsonl.gz"))
            raise InputError(f"{target}: no such released records; shipped: {', '.join(shipped)}")
        return str(path)
    return target


class ReplayJudge:
    """A judge's recorded judgments (a records file, `posbias.judges.records`) answering again: its comparisons are
    the recorded ones, each asking answered by its record."""

    def __init__(self, target: str, judge: str | None = None):
        self.path = records_path(target)
        self.recorded = {(j.question, j.first, j.second, j.repetition): j for j in read_judgments(self.path, judge)}
        self.name = next(iter(self.recorded.values())).judge

    def describe(self) -> dict:
        return {"replay": str(self.path), "judge": self.name, "judgments": len(self.recorded)}

    def comparisons(self, settings: Mapping) -> list[Asking]:
        askings = [Asking(j.question, j.first, j.second, j.subject, j.repetition) for j in self.recorded.values()]
        if settings.get("n_questions"):
            kept = set(sorted({asking.question for asking in askings})[:settings["n_questions"]])
            askings = [asking for asking in askings if asking.question in kept]
        return askings

    def judge(self, askings: Sequence[Asking], max_new_tokens: int = 0, temperature: float = 0.0
              ) -> list[Judgment]:
        try:
            return [self.recorded[(a.question, a.first, a.second, a.repetition)] for a in askings]
        except KeyError as err:
            raise InputError(f"{self.path}: no recorded judgment for {err.args[0]}") from None
