"""Approximate matching of a relevant passage to a document (the study's S B.4), on normalised text.

Normalisation replaces every character outside [0-9a-zA-Z] with a space and lowercases: one character for
one, so an offset in the normalised document is the same offset in the original. Two stages, in order:

1. the longest common substring; accepted when its length is at least `substring_min` (0.8) of the
   passage's, starting where the substring first occurs in the document (the study's `doc.index`);
2. the longest common subsequence over document windows of ceil(`window` * |p|) characters (1.2), taken
   every floor(`step` * |p|) characters (0.1, at least 1); the best window (the first on ties) is accepted
   when LCS / |p| is at least `subsequence_min` (0.7), starting at the document position of the first
   character the alignment keeps.

Speed: a pure-Python character DP costs |p| * |d| steps (about 3M per MS MARCO pair). The substring DP runs
one numpy row per passage character, vectorised over the document: measured on a 314-character passage and
an 8k-character document, 2.9 ms against 21 ms for difflib's SequenceMatcher(autojunk=False).
find_longest_match (whose per-character index lists are long on a 37-letter alphabet). rapidfuzz has no
longest common substring; its bit-parallel LCSseq scores the 250 windows of that pair in 0.5 ms (and the
bisection for the start, below, costs about ten more).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
from rapidfuzz.distance import LCSseq

_OTHER = re.compile(r"[^0-9a-zA-Z]")
SUBSTRING, SUBSEQUENCE = "substring", "subsequence"


def normalise(text: str) -> str:
    return _OTHER.sub(" ", text).lower()


@dataclass(frozen=True)
class Settings:
    substring_min: float = 0.8
    subsequence_min: float = 0.7
    window: float = 1.2
    step: float = 0.1


@dataclass(frozen=True)
class Match:
    start: int  # character offset in the document (normalised and original alike)
    stage: str  # SUBSTRING or SUBSEQUENCE
    ratio: float  # matched characters / passage characters


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("ascii"), dtype=np.uint8)  # normalised text is ASCII


def longest_common_substring(passage: str, document: str) -> tuple[int, int]:
    """(length, end offset in `document`) of the longest common substring of two normalised texts; the DP of
    common suffix lengths, one vectorised row per passage character."""
    if not passage or not document:
        return 0, 0
    doc = _codes(document)
    previous = np.zeros(len(doc) + 1, dtype=np.int32)
    best, end = 0, 0
    for char in _codes(passage):
        current = np.zeros_like(previous)
        current[1:] = np.where(doc == char, previous[:-1] + 1, 0)
        j = int(current.argmax())
        if current[j] > best:
            best, end = int(current[j]), j
        previous = current
    return best, end


def window_starts(doc_length: int, width: int, step: int) -> list[int]:
    """Window starts every `step` characters; the last window ends at the document's end."""
    if doc_length <= width:
        return [0]
    starts = list(range(0, doc_length - width + 1, step))
    if starts[-1] != doc_length - width:
        starts.append(doc_length - width)
    return starts


def best_subsequence(passage: str, document: str, settings: Settings) -> tuple[int, int]:
    """(LCS length, document offset of the first aligned character) of the best window, -1 if nothing aligns.

    An LCS alignment is not unique: inside a window that starts before the passage, common letters of the text
    in front can join an optimal alignment and pull its first character forward. The start is therefore the
    latest one any optimal alignment allows: the largest k with LCS(p, window[k:]) still the best, found by
    bisection (LCS only falls as k grows). Every optimal alignment of window[k:] uses its first character."""
    size = len(passage)
    width, step = math.ceil(settings.window * size), max(1, math.floor(settings.step * size))
    best, best_start = -1, 0
    for start in window_starts(len(document), width, step):
        score = LCSseq.similarity(passage, document[start:start + width])
        if score > best:
            best, best_start = score, start
    if best <= 0:
        return 0, -1
    window = document[best_start:best_start + width]
    low, high = 0, len(window) - 1  # LCS(p, window[low:]) == best holds at low; find its last k
    while low < high:
        middle = (low + high + 1) // 2
        if LCSseq.similarity(passage, window[middle:]) == best:
            low = middle
        else:
            high = middle - 1
    return best, best_start + low


def match(passage: str, document: str, settings: Settings = Settings()) -> Match | None:
    """Where the normalised `passage` sits in the normalised `document`, or None."""
    if not passage.strip():
        return None
    size = len(passage)
    length, end = longest_common_substring(passage, document)
    if length / size >= settings.substring_min:
        return Match(document.index(document[end - length:end]), SUBSTRING, length / size)
    score, start = best_subsequence(passage, document, settings)
    if start >= 0 and score / size >= settings.subsequence_min:
        return Match(start, SUBSEQUENCE, score / size)
    return None
