"""The judge battery: each comparison asked in both orders (and as often as `repetitions` says); per question and
place (0: the subject answer read first, 1: read second) the subject's win rate over the question's comparisons and
repetitions (a tie half a win), so the shared metric suite (`posbias.stats.position_curve`) draws the primacy or
recency preference as a curve from the same values as every other battery. Beside the curve, in the battery's extras, Shi et al.'s
metrics with their intervals over questions (`posbias.judges.metrics.judge_summary`).

`combine: both_orders` (the both_orders mitigation) makes both orders' verdicts one (the same candidate preferred
both times: that one; else a tie), the verdict then standing at both places: what a judge asked both ways
reports, at twice the prompts. `combine: permutation_self_consistency` (that mitigation, as Tang et al. apply it to
listwise rankers) draws `consistency_k` orders per comparison and takes the majority of their verdicts."""

from __future__ import annotations

from typing import Mapping

from posbias.audit.results import METRICS, BatteryResult

# A judge that reads neither answer wins the subject half its comparisons, but a win rate has no chance floor: a
# subject worse than the other answer honestly wins less than half the time, so no margin above 0.5 is measured
# (PSI above chance stays empty) and the win rate of the worse answer is not "below chance"
JUDGE_CHANCE = None
PROMPTS_PER_VERDICT = {"none": 1, "both_orders": 2}  # permutation self-consistency: its k


def combined(judgments: list, draws=None, majority: bool = False) -> list:
    """Each comparison's verdicts (per repetition) made one and given to both its askings. `draws(pair)` names the
    askings that vote (0: the subject read first, 1: second; default both once); `majority`: the mean vote decides
    (permutation self-consistency: more wins than losses a win, as many a tie), else only a unanimous vote stands
    and any disagreement is a tie (both orders). An unread vote leaves the verdict unread."""
    from dataclasses import replace

    from posbias.judges.metrics import choice_pairs

    out = []
    for pair in choice_pairs(judgments):
        sides = [side for side in (pair.subject_first, pair.subject_second) if side is not None]
        votes = [(pair.subject_first, pair.subject_second)[slot] for slot in (draws(pair) if draws else (0, 1))]
        wins = [None if vote is None else vote.subject_wins for vote in votes]
        if None in wins:
            out += [replace(side, choice=None) for side in sides]
            continue
        if majority:
            mean = sum(wins) / len(wins)
            agreed = 0.5 if mean == 0.5 else float(mean > 0.5)
        else:
            agreed = wins[0] if len(set(wins)) == 1 else 0.5
        out += [replace(side, choice=_choice_giving(side, agreed)) for side in sides]
    return out


def embedded_comparisons(settings: Mapping) -> list:
    """The embedded world's first `n_questions` questions, each with its answering passage (the subject: the better
    answer) against the passage its retrieval ranks highest among those that do not answer it, asked both ways."""
    from posbias.audit.batteries import _embedded_qa_records  # the reader batteries' records, retrieved once
    from posbias.judges.judging import both_orders

    askings = []
    for index, record in enumerate(_embedded_qa_records(settings["n_questions"], 50)):
        other = next(ctx for ctx in record["ctxs"] if not ctx["hasanswer"])
        texts = {"gold": record["nq_annotated_gold"]["long_answer"], "distractor": other["text"]}
        askings += both_orders(str(index), "gold", "distractor", texts, record["question"], settings["repetitions"])
    return askings


def drawn_orders(settings: Mapping):
    """The permutation self-consistency's draws: `consistency_k` orders per comparison, shuffled (each order drawn
    at random from a generator seeded by the seed and the comparison) or rotated (the subject first, then second,
    in turn)."""
    import zlib

    import numpy as np

    k, seed = settings["consistency_k"], settings["consistency_seed"]

    def draws(pair) -> list[int]:
        if settings["consistency_orders"] == "rotations":
            return [i % 2 for i in range(k)]
        key = zlib.crc32("|".join((pair.question, *pair.candidates, str(pair.repetition))).encode())
        return np.random.default_rng([seed, key]).integers(0, 2, size=k).tolist()

    return draws


def _choice_giving(side, subject_wins: float) -> str:
    """The choice in `side`'s order that gives the subject `subject_wins`."""
    if subject_wins == 0.5:
        return "tie"
    slots = ("first", "second")
    return slots[side.subject_slot] if subject_wins == 1.0 else slots[1 - side.subject_slot]


def judge_battery(judge, settings: Mapping) -> BatteryResult:
    import pandas as pd

    from posbias.judges.metrics import judge_summary

    # a replay (or a planted judge) has its own comparisons; a live judge is asked the embedded world's
    askings = judge.comparisons(settings) if judge.comparisons is not None else embedded_comparisons(settings)
    judgments = judge.judge(askings, settings["max_new_tokens"], settings["temperature"])
    raw = judge_summary(judgments)
    if settings["combine"] == "both_orders":
        judgments = combined(judgments)
    elif settings["combine"] == "permutation_self_consistency":
        judgments = combined(judgments, drawn_orders(settings), majority=True)
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
    extra = {"chance": JUDGE_CHANCE, "combine": settings["combine"], "judge_metrics": raw,
             "unread_judgments": int(frame["value"].isna().sum()), "judgments": len(frame),
             "comparisons_read_at_one_place_only": int(read.loc[~both, "comparison"].nunique()),
             # what the verdicts cost in use (posbias.audit.mitigation_table): a prompt per comparison, two asked
             # both ways, k for k drawn orders (a drawn order's verdict is asked once here and reused: the cost
             # counts what a judge asking k orders pays)
             "decision_inputs": len(askings) // 2 * PROMPTS_PER_VERDICT.get(settings["combine"],
                                                                            settings["consistency_k"]),
             **({key: settings[key] for key in settings if key.startswith("consistency_")}
                if settings["combine"] == "permutation_self_consistency" else {})}
    return BatteryResult("judge", METRICS["judge"], values[["unit", "position", "value"]], extra=extra)
