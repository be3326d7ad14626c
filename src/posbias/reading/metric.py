"""The authors' metrics (spec §4), quirks kept so that our numbers and theirs are comparable.

QA, `best_subspan_em` (their metrics.py with evaluate_qa_responses.py):

- only the **first line** of the raw completion counts, cut *before* any normalisation; a completion that
  opens with a newline scores 0 (quirk 1, kept; `empty_first_line` flags it, and `lstrip_first=True` is the
  Llama-2 script's behaviour, which strips first);
- SQuAD normalisation: lower case, ASCII punctuation dropped (typographic quotes and dashes survive), the
  articles a/an/the replaced by a space, whitespace collapsed;
- the test is a plain **character substring** test, not a token span: gold "14" matches "1400" (quirk 3, kept);
- a gold answer that normalises to the empty string (the oracle file's "*") is a substring of everything, so
  its question is always correct (quirk 2, kept; each such gold answer is logged once as a warning).

KV, `kv_accuracy` (evaluate_kv_responses.py): the value anywhere in the raw, whole completion, case-insensitive,
so a model that copies the whole context scores 1 (quirk 4, kept). `kv_strict_accuracy` is our diagnostic:
the first line alone must be the value.
"""

from __future__ import annotations

import logging
import re
import string
from typing import Iterable

log = logging.getLogger(__name__)

_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
# Characters a model commonly wraps a bare value in ("value", 'value', value.), stripped by the strict KV test.
_WRAPPING = "\"'`.,;:"
_warned_empty_golds: set[str] = set()


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, no ASCII punctuation, no articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def first_line(prediction: str, lstrip_first: bool = False) -> str:
    """What the QA metric reads: the completion up to its first newline, stripped."""
    if lstrip_first:
        prediction = prediction.lstrip()
    return prediction.split("\n")[0].strip()


def empty_first_line(prediction: str) -> bool:
    """True when the QA metric sees nothing, e.g. a completion that starts with a newline."""
    return first_line(prediction) == ""


def best_subspan_em(prediction: str, answers: Iterable[str], lstrip_first: bool = False) -> float:
    """1.0 if any normalised gold answer is a substring of the normalised first line of `prediction`."""
    seen = normalize_answer(first_line(prediction, lstrip_first))
    for answer in answers:
        gold = normalize_answer(answer)
        if not gold:
            _warn_empty_gold(answer)
        if gold.lower() in seen:  # the authors' redundant .lower(), harmless
            return 1.0
    return 0.0


def _warn_empty_gold(answer: str) -> None:
    if answer not in _warned_empty_golds:
        _warned_empty_golds.add(answer)
        log.warning("gold answer %r normalises to the empty string, which matches every prediction "
                    "(kept, as in the authors' metric)", answer)


def kv_accuracy(prediction: str, value: str) -> float:
    """1.0 if `value` occurs anywhere in the raw completion, ignoring case (the authors' KV metric)."""
    return 1.0 if value.lower() in prediction.lower() else 0.0


def kv_strict_accuracy(prediction: str, value: str) -> float:
    """1.0 only if the first line, stripped of whitespace and of quotes or a trailing full stop around it, is
    exactly `value` (a diagnostic: copying the context no longer scores)."""
    return 1.0 if first_line(prediction).strip(_WRAPPING).strip() == value else 0.0
