"""Accuracy by gold position (spec §1.0, §4.4), with what the paper leaves out: a 95% Wilson interval per point,
an exact McNemar test of each position against the first one, and the best-worst gap, the paper's proposed
robustness criterion. The test is paired: every position holds the same questions (see `exclusions`), so it
compares the two answers to each question.

The reference is the first position of each curve (the lowest gold index asked, index 0 in the paper's grids),
fixed before the data are seen. Testing against the best position would pick the reference from the same answers
it is then tested on, and a curve's best is its best partly by chance, so every other position would look worse
than it is. The tests of one curve (model, task, variant, size) form one family, adjusted together with the
configured correction (`litm.correction`, Holm by default, `posbias.stats.corrections`). A position whose answers
agree with the reference's on every question has no test (p is NaN) and leaves the family.

Input: one row per scored example with columns `model`, `task`, `variant`, `size`, `gold_index`, `example_id`
and `correct`. `size` is the number of documents or pairs; the closed-book rows have size 0 and the oracle
rows size 1 (zero and one document), and they are kept as reference levels, not positions. Rows of size 2 or
more without a gold index (documents read as retrieved, §1.7) are summarised per size only (level `open`).
Accuracies and gaps are fractions (the paper prints them x100).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from posbias.stats.corrections import adjust
from posbias.stats.paired import exact_mcnemar
from posbias.stats.position_curve import curve_summary, position_curve

GROUP = ["model", "task", "variant", "size"]
REQUIRED = [*GROUP, "gold_index", "example_id", "correct"]
REFERENCE_LEVELS = {0: "closedbook", 1: "oracle"}


def _level(size: int, gold_index) -> str:
    if size in REFERENCE_LEVELS:
        return REFERENCE_LEVELS[size]
    return "open" if pd.isna(gold_index) else "position"


def position_table(scored: pd.DataFrame, alpha: float = 0.05, correction: str = "holm") -> pd.DataFrame:
    """One row per (model, task, variant, size, gold index): `level`, `n`, `n_correct`, `accuracy`, `ci_low`,
    `ci_high` (Wilson, 1 - `alpha`), and for positions `best` (the highest accuracy, the first such position on
    ties; descriptive only), `reference` (the curve's first position), `n_paired`, `only_here` and
    `only_reference` (questions right at this position only, or at the reference only), `mcnemar_p` (exact,
    against the reference; NaN for the reference itself and where no question is answered differently) and
    `mcnemar_p_adjusted` (`correction` over the tests of the curve)."""
    missing = [column for column in REQUIRED if column not in scored.columns]
    if missing:
        raise ValueError(f"scored examples lack the columns {missing}")
    frame = scored[REQUIRED].copy()
    frame["correct"] = frame["correct"].astype(bool)
    frame["gold_index"] = frame["gold_index"].astype("Int64")
    frame["example_id"] = frame["example_id"].astype(str)
    repeated = frame.duplicated([*GROUP, "gold_index", "example_id"])
    if repeated.any():
        first = frame[repeated].iloc[0]
        raise ValueError(f"example {first['example_id']} is scored twice at gold index {first['gold_index']} of "
                         f"{dict(first[GROUP])}")
    rows = []
    for keys, group in frame.groupby(GROUP, sort=True, dropna=False):
        rows.extend(_group_rows(dict(zip(GROUP, keys)), group, alpha, correction))
    return pd.DataFrame(rows, columns=[*GROUP, "gold_index", "level", "n", "n_correct", "accuracy", "ci_low",
                                       "ci_high", "best", "reference", "n_paired", "only_here", "only_reference",
                                       "mcnemar_p", "mcnemar_p_adjusted"])


def _group_rows(keys: dict, group: pd.DataFrame, alpha: float, correction: str) -> list[dict]:
    points = {}
    for gold_index, at in group.groupby("gold_index", sort=True, dropna=False):
        n, hits = len(at), int(at["correct"].sum())
        low, high = proportion_confint(hits, n, alpha=alpha, method="wilson")
        points[gold_index] = {**keys, "gold_index": gold_index, "level": _level(keys["size"], gold_index), "n": n,
                              "n_correct": hits, "accuracy": hits / n, "ci_low": float(low), "ci_high": float(high),
                              "best": False, "reference": False, "n_paired": np.nan, "only_here": np.nan,
                              "only_reference": np.nan, "mcnemar_p": np.nan, "mcnemar_p_adjusted": np.nan}
    positions = sorted(g for g, point in points.items() if point["level"] == "position")
    if positions:
        best = max(positions, key=lambda g: (points[g]["accuracy"], -g))
        points[best]["best"] = True
        reference = positions[0]  # fixed by the config's grid, never by the answers
        points[reference]["reference"] = True
        placed = group[group["gold_index"].notna()]
        answers = placed.pivot(index="example_id", columns="gold_index", values="correct")
        tested = positions[1:]
        for g in tested:
            points[g].update(_mcnemar(answers[g], answers[reference]))
        adjusted = adjust([points[g]["mcnemar_p"] for g in tested], correction)  # NaN: no test, not in the family
        for g, p in zip(tested, adjusted):
            points[g]["mcnemar_p_adjusted"] = float(p)
    return [points[g] for g in sorted(points, key=lambda g: -1 if pd.isna(g) else g)]


def _mcnemar(here: pd.Series, reference: pd.Series) -> dict:
    """The exact McNemar test over the questions answered at both positions."""
    n_paired, only_here, only_reference, p = exact_mcnemar(here, reference)
    return {"n_paired": n_paired, "only_here": only_here, "only_reference": only_reference, "mcnemar_p": p}


def gap_table(positions: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, task, variant, size) curve: the best and worst positions and their accuracies, `gap`
    (best - worst, descriptive: no test, since both ends are picked from the answers), `first_minus_min` and
    `last_minus_min`, and the closed-book and oracle accuracies of the same model (same variant, else the default
    one) as `closedbook` and `oracle`."""
    curves = positions[positions["level"] == "position"]
    references = positions[positions["level"].isin(REFERENCE_LEVELS.values())]
    rows = []
    for keys, curve in curves.groupby(GROUP, sort=True):
        keys = dict(zip(GROUP, keys))
        curve = curve.sort_values("gold_index")
        best = curve[curve["best"]].iloc[0]
        lowest = curve["accuracy"].min()
        worst = curve[curve["accuracy"] == lowest].iloc[0]  # the first of tied worst positions
        rows.append({**keys, "n_positions": len(curve), "n": int(curve["n"].max()),
                     "best_index": int(best["gold_index"]), "best_accuracy": best["accuracy"],
                     "worst_index": int(worst["gold_index"]), "worst_accuracy": lowest,
                     "gap": best["accuracy"] - lowest,
                     "first_minus_min": curve["accuracy"].iloc[0] - lowest,
                     "last_minus_min": curve["accuracy"].iloc[-1] - lowest,
                     "closedbook": _reference(references, keys, "closedbook"),
                     "oracle": _reference(references, keys, "oracle")})
    return pd.DataFrame(rows, columns=[*GROUP, "n_positions", "n", "best_index", "best_accuracy", "worst_index",
                                       "worst_accuracy", "gap", "first_minus_min", "last_minus_min",
                                       "closedbook", "oracle"])


def _reference(references: pd.DataFrame, keys: dict, level: str) -> float:
    same = references[(references["model"] == keys["model"]) & (references["task"] == keys["task"])
                      & (references["level"] == level)]
    for variant in (keys["variant"], "default"):
        found = same[same["variant"] == variant]
        if len(found):
            return float(found["accuracy"].iloc[0])
    return math.nan


def sensitivity_table(scored: pd.DataFrame, correction: str = "holm", alpha: float = 0.05, seed: int = 0
                      ) -> pd.DataFrame:
    """One row per (model, task, variant, size) curve: the position-curve metric suite
    (`posbias.stats.position_curve`) of its accuracy by gold index, the questions paired across positions, the
    first index the reference, exact McNemar tests corrected over the curve (`correction`); `reach` is a gold
    index (0-based), `reach_fraction` the share of the context's documents up to and including it, (reach + 1) /
    size: 1 for a curve with no drop, 1 / size when the second document already drops."""
    placed = scored[scored["gold_index"].notna() & (scored["size"] >= 2)]
    rows = []
    for keys, group in placed.groupby(GROUP, sort=True):
        values = pd.DataFrame({"unit": group["example_id"].astype(str), "position": group["gold_index"].astype(int),
                               "value": group["correct"].astype(float)})
        curve = position_curve(values, test="mcnemar", correction=correction, alpha=alpha, seed=seed)
        summary = curve_summary(curve)
        summary["reach_fraction"] = (summary["reach"] + 1) / keys[-1]
        rows.append({**dict(zip(GROUP, keys)), "n_positions": len(curve), "n": int(curve["n"].min()), **summary})
    return pd.DataFrame(rows)
