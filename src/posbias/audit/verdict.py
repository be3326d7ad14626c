"""A card's verdict: what an audit found, in words a reader takes in before any table, written from the battery's
numbers alone (its summary, its curve, its settings). Per battery, one or two sentences: what the metric does as the
relevant text moves (from what at the first position to what at the worst, against chance where the metric has a
floor), how many later positions are significantly lower and where the first of them is (past the model's window
where the positions are in tokens), and how strong the tests were (their kind, correction, units, the smallest drop
they find with 80% power). The card (`posbias.audit.card`) and the Hub export print them."""

from __future__ import annotations

import math
from typing import Mapping

import pandas as pd

from posbias.audit.battery_settings import DECLARED
from posbias.reporting.render import number
from posbias.stats.corrections import METHODS


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def battery_label(record: Mapping) -> str:
    """The battery's short name: its card heading up to the colon ("Position sweep")."""
    return DECLARED[record["battery"]].title.split(":")[0]


def corrected(correction: str) -> str:
    """"Holm-corrected", "Benjamini-Hochberg-corrected", ... or "uncorrected"."""
    return "uncorrected" if correction == "none" else f"{METHODS.get(correction, correction)}-corrected"
TESTS = {"t": "paired t", "mcnemar": "McNemar", "wilcoxon": "Wilcoxon signed-rank"}


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def position_label(row: Mapping, curve: pd.DataFrame) -> str:
    """A position as a card names it: the relevant text's first token where the battery counts tokens, else its
    place among the curve's positions."""
    if _finite(row.get("tokens")):
        return f"token {round(row['tokens'])}"
    return f"position {int(row['position']) + 1} of {len(curve)}"


def where(row: Mapping, curve: pd.DataFrame, subject: str) -> str:
    """Where a position of the curve puts the relevant text, as a clause."""
    label = position_label(row, curve)
    return f"when {subject} starts at {label}" if label.startswith("token") else f"when {subject} is at {label}"


def power_clause(record: Mapping, units: int, noun: str) -> str:
    """How strong the tests were: their kind and correction, the units and the smallest drop found at 80% power."""
    stats = record["settings"]["statistics"]
    detectable = record["summary"].get("detectable_drop")
    found = (f"a drop of {number(detectable)} or more is found with 80% power" if _finite(detectable)
             else "no detectable drop size could be computed from these values")
    return (f"{TESTS.get(record['test'], record['test'])} tests against the first position, "
            f"{corrected(stats['correction'])} at alpha {stats['alpha']:g}, over {units} {noun}: {found}")


def chance_clause(worst: float, chance) -> str:
    if not _finite(chance) or chance <= 0:
        return ""
    return f", {'at or below' if worst <= chance + 1e-9 else 'against'} chance ({number(chance)})"


def curve_verdict(record: Mapping, curve: pd.DataFrame) -> str:
    """The sentences of one curve (a battery without lengths)."""
    declared, summary, metric = DECLARED[record["battery"]], record["summary"], record["metric"]
    curve = curve.sort_values("position").reset_index(drop=True)
    first, worst_row = curve.iloc[0], curve.loc[curve["mean"].idxmin()]
    units, later = int(curve["n"].min()), len(curve) - 1
    chance = record.get("extra", {}).get("chance")
    power = power_clause(record, units, declared.unit_noun)
    opening = f"{metric} is {number(first['mean'])} when {declared.subject} comes first"
    if summary["significant_drops"] == 0:
        lowest = ("" if int(worst_row["position"]) == int(first["position"]) else
                  f" (lowest {number(worst_row['mean'])}, {where(worst_row, curve, declared.subject)})")
        if summary.get("underpowered"):
            return (f"{opening}{lowest}, but with {units} {declared.unit_noun} none of the {later} corrected tests "
                    f"can reach significance: read the curve, not a verdict.")
        unseen = (", so a smaller drop may be there unseen" if _finite(summary.get("detectable_drop")) else "")
        return f"{opening}, and no later position is significantly lower{lowest}; {power}{unseen}."
    dropped = curve[curve["drop"].astype(bool)]
    first_drop = dropped.iloc[0]
    text = (f"{metric} falls from {number(first['mean'])} when {declared.subject} comes first to "
            f"{number(worst_row['mean'])} {where(worst_row, curve, declared.subject)}"
            f"{chance_clause(float(worst_row['mean']), chance)}: {summary['significant_drops']} of {later} later "
            f"positions {'is' if summary['significant_drops'] == 1 else 'are'} significantly lower, the first "
            f"{where(first_drop, curve, declared.subject)}")
    window = record.get("model", {}).get("window")
    if _finite(first_drop.get("tokens")) and _finite(window) and first_drop["tokens"] >= window:
        text += f", past the model's {int(window)}-token window"
    text += f" ({power})."
    above = summary.get("psi_above_chance")
    if _finite(above):
        lost = "all" if above >= 1 else f"{above:.0%}"
        text += f" At the worst position, {lost} of the best position's margin above chance is lost."
    return text


def first_last_sentence(first_last: Mapping) -> str:
    """The probe's first-versus-last pairs, when the battery ran them."""
    if not _finite(first_last.get("t")):
        return (f" With the evidence first or last in the same document, every one of the {first_last['n']} pairs "
                f"scores the same.")
    return (f" With the evidence first rather than last in the same document, the pair scores higher in "
            f"{first_last['win_rate']:.0%} of {first_last['n']} documents (paired t = {first_last['t']:.2f}, "
            f"p = {first_last['p']:.2g}).")


def grid_verdict(record: Mapping, curve: pd.DataFrame) -> str:
    """A depth x length grid: at how many lengths a depth is significantly worse, and the longest length's curve."""
    declared, lengths, metric = DECLARED[record["battery"]], record["summary"]["lengths"], record["metric"]
    depths = record["extra"]["depths"]
    with_drops = [length for length, summary in lengths.items() if summary["significant_drops"]]
    powerless = [length for length, summary in lengths.items() if summary.get("underpowered")]
    longest = max(lengths, key=lambda length: float(length))
    at_longest = curve[curve["length"].astype(float) == float(longest)].sort_values("position")
    worst = at_longest.loc[at_longest["mean"].idxmin()]
    caveat = ("" if not powerless else
              f" With {int(at_longest['n'].min())} {declared.unit_noun}, {len(powerless)} of the {len(lengths)} "
              f"lengths' tests cannot reach significance at all: read those curves, not a verdict."
              if len(powerless) < len(lengths) else
              f" With {int(at_longest['n'].min())} {declared.unit_noun}, no length's tests can reach significance: "
              f"read the curves, not a verdict.")
    detectable = lengths[longest].get("detectable_drop")
    power = (f"; a drop of {number(detectable)} or more is found there with 80% power" if _finite(detectable)
             and not lengths[longest].get("underpowered") else "")
    return (f"{len(with_drops)} of {len(lengths)} context lengths have a depth significantly below the first "
            f"({metric}, {TESTS.get(record['test'], record['test'])} tests, "
            f"{corrected(record['settings']['statistics']['correction'])} within each "
            f"length); at the longest, {round(float(longest))} tokens, {metric} goes from "
            f"{number(at_longest['mean'].iloc[0])} when {declared.subject} is at depth {depths[0]:g} to "
            f"{number(worst['mean'])} at depth {depths[int(worst['position'])]:g} "
            f"({_plural(lengths[longest]['significant_drops'], 'significant drop')} over "
            f"{int(at_longest['n'].min())} {declared.unit_noun}{power}).{caveat}")


def battery_verdict(record: Mapping, curve: pd.DataFrame) -> str:
    """One battery's verdict (without its name)."""
    if "lengths" in record["summary"]:
        return grid_verdict(record, curve)
    text = curve_verdict(record, curve)
    if record.get("extra", {}).get("first_last"):
        text += first_last_sentence(record["extra"]["first_last"])
    return text


def verdicts(records, curves: Mapping[str, pd.DataFrame]) -> list[tuple[str, str]]:
    """(battery's short name, its verdict) for each battery, in the records' (the card's) order."""
    return [(battery_label(record), battery_verdict(record, curves[record["battery"]])) for record in records]


def audit_verdict(records, curves: Mapping[str, pd.DataFrame]) -> str:
    """The whole audit's verdict as one paragraph of plain text."""
    return " ".join(f"{label}: {text}" for label, text in verdicts(records, curves))
