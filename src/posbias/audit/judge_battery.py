"""The judge battery: each comparison asked in both orders (and as often as `repetitions` says); per question and
place (0: the subject answer read first, 1: read second) the subject's win rate over the question's comparisons and
repetitions (a tie half a win), so the shared metric suite (`posbias.stats.position_curve`) draws the primacy or
recency preference as a curve from the same values as every other battery. Beside the curve, in the battery's extras, Shi et al.'s
metrics with their intervals over questions (`posbias.judges.metrics.judge_summary`).

`combine: both_orders` (the both_orders mitigation) makes both orders' verdicts one (the same candidate preferred
both times: that one; else a tie), the verdict then standing at both places: what a judge asked both ways
reports, at twice the prompts."""

from __future__ import annotations

from typing import Mapping

from posbias.audit.results import METRICS, BatteryResult

JUDGE_CHANCE = 0.5  # a judge that reads neither answer picks a place: the subject wins half the time


def combined(judgments: list) -> list:
    """Each comparison's two verdicts (per repetition) made one and given to both askings (`combine: both_orders`):
    the same win both times stands, a disagreement is a tie, an unread order leaves both unread."""
    from dataclasses import replace

    from posbias.judges.metrics import choice_pairs

    out = []
    for pair in choice_pairs(judgments):
        sides = [side for side in (pair.subject_first, pair.subject_second) if side is not None]
        wins = {side.subject_wins for side in sides}
        if len(sides) < 2 or None in wins:
            out += [replace(side, choice=None) for side in sides]
            continue
        agreed = wins.pop() if len(wins) == 1 else 0.5
        out += [replace(side, choice=_choice_giving(side, agreed)) for side in sides]
    return out


def _choice_giving(side, subject_wins: float) -> str:
    """The choice in `side`'s order that gives the subject `subject_wins`."""
    if subject_wins == 0.5:
        return "tie"
    slots = ("first", "second")
    return slots[side.subject_slot] if subject_wins == 1.0 else slots[1 - side.subject_slot]


def judge_battery(judge, settings: Mapping) -> BatteryResult:
    import pandas as pd

    from posbias.judges.metrics import judge_summary

    askings = judge.comparisons(settings)
    judgments = judge.judge(askings, settings["max_new_tokens"], settings["temperature"])
    raw = judge_summary(judgments)
    if settings["combine"] == "both_orders":
        judgments = combined(judgments)
    rows = [{"comparison": "|".join(judgment.pair), "question": judgment.question, "position": judgment.subject_slot,
             "value": judgment.subject_wins} for judgment in judgments]
    frame = pd.DataFrame(rows, columns=["comparison", "question", "position", "value"])
    read = frame.dropna(subset=["value"])
    # a comparison counts where it was read at both places; the curve's unit is the question (its comparisons'
    # mean), since the comparisons of one question share its difficulty: the curve's intervals and paired tests
    # then resample and pair what is independent, as the metrics' intervals do
    both = read.groupby("comparison")["position"].transform("nunique") == 2
    values = (read[both].groupby(["question", "position"], as_index=False)["value"].mean()
              .rename(columns={"question": "unit"}))
    extra = {"chance": JUDGE_CHANCE, "combine": settings["combine"], "judge_metrics": _plain(raw),
             "unread_judgments": int(frame["value"].isna().sum()), "judgments": len(frame),
             "comparisons_read_at_one_place_only": int(read.loc[~both, "comparison"].nunique()),
             # what the verdicts cost in use (posbias.audit.mitigation_table): a prompt per comparison, or two
             "decision_inputs": len(askings) // (1 if settings["combine"] == "both_orders" else 2)}
    return BatteryResult("judge", METRICS["judge"], values[["unit", "position", "value"]], extra=extra)


def _plain(summary: dict) -> dict:
    """The summary with its intervals as lists and NaN as None (JSON)."""
    def clean(value):
        if isinstance(value, float) and value != value:
            return None
        if isinstance(value, tuple):
            return [clean(item) for item in value]
        if isinstance(value, dict):
            return {key: clean(item) for key, item in value.items()}
        return value
    return clean(summary)
