"""How position-biased a judge is, from its judgments in both orders (`posbias.judges.records`): the three metrics of
Shi et al., "Judging the Judges: A Systematic Study of Position Bias in LLM-as-a-Judge" (arXiv 2406.07791), Cohen's
kappa between the two orders, and intervals that resample whole questions.

A comparison is a question and two candidates; asked in both orders, its two verdicts form a *choice pair*, read in
slots (the first-read candidate, the second-read one):

- consistent: the same candidate preferred both times (first then second, second then first), or a tie both
  times, or neither both times;
- primacy-preferred: the first-read candidate preferred both times, or preferred once and a tie the other time;
- recency-preferred: the same for the second-read candidate;
- any other pair (neither against a preference or a tie) has no direction and, as in the authors' released
  analysis, counts in no metric; a pair with an unread verdict counts in none either (`unread`).

- **position consistency** PC = consistent / (consistent + primacy + recency) (Shi et al., section 3);
- **preference fairness** PF = (recency - primacy) / (consistent + primacy + recency), in [-1, 1], 0 fair,
  positive a recency preference: the authors' raw score (recency count x recency share of the inconsistent
  pairs - primacy count x primacy share) rescaled by its largest possible size, the number of pairs, where both
  directions reach it (their released `consistency_preference_calculation.py`: the raw score reduces to recency -
  primacy). The authors rescale per (judge, model, task) and average; pooled here over every pair;
- **repetition stability** RS: for each asking (a question, an order) judged several times, the share of its
  repetitions that gave its most frequent verdict; the mean over askings (1: the same verdict every time);
- **order kappa**: Cohen's kappa between the verdict in the subject-first order and the subject-second order,
  each as which candidate it prefers (subject, other, tie, neither): 1 when the order changes nothing, 0 when
  the two orders agree no more than chance would (statsmodels' `cohens_kappa`).

The intervals are percentile bootstraps over questions (`scipy.stats.bootstrap` resampling the questions, each
with all its comparisons), since comparisons of one question share its difficulty and are not independent.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from posbias.judges.records import Judgment

KINDS = ("consistent", "primacy", "recency", "undirected", "unread")
# verdict pairs in slots (subject-first asking's choice, subject-second asking's choice), sorted for lookup
_CONSISTENT = {("first", "second"), ("second", "first"), ("tie", "tie"), ("neither", "neither")}
_PRIMACY = {("first", "first"), ("first", "tie"), ("tie", "first")}
_RECENCY = {("second", "second"), ("second", "tie"), ("tie", "second")}
VERDICTS = ("subject", "other", "tie", "neither")


def pair_kind(one: str | None, other: str | None) -> str:
    """What a choice pair (the two orders' choices, in slots) is: one of `KINDS`."""
    if one is None or other is None:
        return "unread"
    pair = (one, other)
    for kind, members in (("consistent", _CONSISTENT), ("primacy", _PRIMACY), ("recency", _RECENCY)):
        if pair in members:
            return kind
    return "undirected"


def verdict(judgment: Judgment) -> str | None:
    """The choice as which candidate it prefers: subject, other, tie, neither (None: unread)."""
    if judgment.choice in (None, "tie", "neither"):
        return judgment.choice
    return "subject" if judgment.subject_wins == 1.0 else "other"


@dataclass(frozen=True)
class ChoicePair:
    question: str
    candidates: tuple[str, str]
    repetition: int
    subject_first: Judgment | None  # the asking with the subject read first
    subject_second: Judgment | None

    @property
    def kind(self) -> str:
        if self.subject_first is None or self.subject_second is None:
            return "unread"
        return pair_kind(self.subject_first.choice, self.subject_second.choice)


def choice_pairs(judgments: Sequence[Judgment]) -> list[ChoicePair]:
    """The judgments grouped into comparisons asked in both orders, per repetition (an asking without its swapped
    twin is a pair with one side missing: unread)."""
    grouped: dict = defaultdict(dict)
    for judgment in judgments:
        grouped[(judgment.pair, judgment.repetition)][judgment.subject_slot] = judgment
    return [ChoicePair(pair[0], pair[1:], repetition, sides.get(0), sides.get(1))
            for (pair, repetition), sides in sorted(grouped.items())]


def kind_counts(pairs: Sequence[ChoicePair]) -> dict[str, int]:
    counts = Counter(pair.kind for pair in pairs)
    return {kind: counts.get(kind, 0) for kind in KINDS}


def consistency_and_fairness(counts: dict[str, int]) -> tuple[float, float]:
    """(PC, PF) from the counts of choice pairs; NaN for both without a directed or consistent pair."""
    total = counts["consistent"] + counts["primacy"] + counts["recency"]
    if not total:
        return float("nan"), float("nan")
    return counts["consistent"] / total, (counts["recency"] - counts["primacy"]) / total


def repetition_stability(judgments: Sequence[Judgment]) -> float | None:
    """Shi et al.'s RS over the askings judged more than once (None when none was); unread verdicts are verdicts of
    their own (a judge that fails to answer the same way each time is unstable)."""
    askings: dict = defaultdict(list)
    for judgment in judgments:
        askings[(judgment.question, judgment.first, judgment.second)].append(judgment.choice)
    shares = [Counter(choices).most_common(1)[0][1] / len(choices) for choices in askings.values() if len(choices) > 1]
    return float(np.mean(shares)) if shares else None


def order_kappa(pairs: Sequence[ChoicePair]) -> float:
    """Cohen's kappa between the two orders' verdicts (subject, other, tie, neither) over the pairs read in both."""
    from statsmodels.stats.inter_rater import cohens_kappa

    table = np.zeros((len(VERDICTS), len(VERDICTS)))
    for pair in pairs:
        if pair.kind != "unread":
            table[VERDICTS.index(verdict(pair.subject_first)), VERDICTS.index(verdict(pair.subject_second))] += 1
    if not table.sum():
        return float("nan")
    used = [index for index in range(len(VERDICTS)) if table[index].sum() or table[:, index].sum()]
    if len(used) < 2:  # one verdict only, in both orders: perfect agreement that kappa cannot tell from chance
        return float("nan")
    return float(cohens_kappa(table[np.ix_(used, used)], return_results=False))


def _cluster_interval(values: np.ndarray, statistic, confidence: float, n_resamples: int, seed: int
                      ) -> tuple[float, float]:
    """A percentile bootstrap interval of `statistic(rows)` resampling the rows of `values` (one per question)."""
    from scipy.stats import bootstrap

    if len(values) < 2:
        return float("nan"), float("nan")
    result = bootstrap((np.arange(len(values)),), lambda index: statistic(values[index.astype(int)]),
                       vectorized=False, n_resamples=n_resamples, confidence_level=confidence, method="percentile",
                       random_state=np.random.default_rng(seed))
    low, high = result.confidence_interval
    return float(low), float(high)


def judge_summary(judgments: Sequence[Judgment], confidence: float = 0.95, n_resamples: int = 1000,
                  seed: int = 0) -> dict:
    """Every metric of the module docstring with its interval over questions, and the counts they are made of."""
    pairs = choice_pairs(judgments)
    counts = kind_counts(pairs)
    consistency, fairness = consistency_and_fairness(counts)
    questions = {question: row for row, question in enumerate(sorted({pair.question for pair in pairs}))}
    per_question = np.zeros((len(questions), len(KINDS)))
    for pair in pairs:
        per_question[questions[pair.question], KINDS.index(pair.kind)] += 1

    def pc(rows):
        return consistency_and_fairness(dict(zip(KINDS, rows.sum(axis=0))))[0]

    def pf(rows):
        return consistency_and_fairness(dict(zip(KINDS, rows.sum(axis=0))))[1]

    interval = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
    summary = {
        "position_consistency": consistency, "preference_fairness": fairness,
        "position_consistency_interval": _cluster_interval(per_question, pc, confidence, n_resamples, seed),
        "preference_fairness_interval": _cluster_interval(per_question, pf, confidence, n_resamples, seed),
        "repetition_stability": repetition_stability(judgments),
        "order_kappa": order_kappa(pairs),
        "primacy_share": (counts["primacy"] / (counts["primacy"] + counts["recency"])
                          if counts["primacy"] + counts["recency"] else float("nan")),
        "pairs": counts, "n_pairs": len(pairs), "n_questions": len(questions), "n_judgments": len(judgments),
        "unread_judgments": sum(judgment.choice is None for judgment in judgments),
        "interval": interval,
    }
    return summary
