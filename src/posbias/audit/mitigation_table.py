"""The mitigation table (`<out>/mitigations.{csv,md,tex,html}`): where an audit mitigates another
(`posbias.audit.mitigations`), the two side by side, battery by battery (and grid length), with the cost of the
mitigation; made from the battery files alone, as the cards and the leaderboard are (`posbias.audit.card`)."""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from posbias.outputs import table_files
from posbias.reporting.render import Table, number, write_tables

log = logging.getLogger(__name__)

MITIGATION_COLUMNS = ["name", "of", "mitigation", "battery", "metric", "first_before", "first_after", "psi_before",
                      "psi_after", "mean_before", "mean_after", "retrieved_before", "retrieved_after",
                      "drops_before", "drops_after", "cost_multiplier"]


def _retrieved_mean(out: str | Path, record: Mapping, shares: Sequence[float] | None) -> float:
    """The curve's mean weighted by how often the retriever put the gold document at each position (a reader's
    `gold_rank_shares`): the accuracy a real context would see. NaN without shares or for another curve length."""
    if not shares:
        return math.nan
    curve = pd.read_csv(Path(out) / record["name"] / f"{record['battery']}.curve.csv")
    if "length" in curve or len(curve) != len(shares):
        return math.nan
    return float((curve.sort_values("position")["mean"].to_numpy() * list(shares)).sum())


def _curve_means(out: str | Path, record: Mapping) -> dict:
    """The mean of the curve over positions, by length for a grid (key None otherwise)."""
    curve = pd.read_csv(Path(out) / record["name"] / f"{record['battery']}.curve.csv")
    if "length" in curve:
        return {str(length): float(part["mean"].mean()) for length, part in curve.groupby("length")}
    return {None: float(curve["mean"].mean())}


def mitigation_frame(out: str | Path, found: Mapping[str, Sequence[Mapping]]) -> pd.DataFrame:
    """A row per mitigated audit, battery (and grid length): the base's numbers and the mitigated ones; the cost
    multiplier is the ratio of the model inputs each battery computed. A battery the base did not run has no row.
    Seconds stay out: a measured time would make every run's table differ (each record's JSON keeps its own)."""
    from posbias.audit.mitigations import describe

    rows = []
    for name, records in found.items():
        for record in records:
            mitigation = record.get("mitigation")
            if not mitigation:
                continue
            base = next((r for r in found.get(mitigation["of"], []) if r["battery"] == record["battery"]), None)
            if base is None:
                continue
            before_means, after_means = _curve_means(out, base), _curve_means(out, record)
            shares = base["extra"].get("gold_rank_shares")  # the retriever's, the same records before and after
            before_each = base["summary"].get("lengths") or {None: base["summary"]}
            after_each = record["summary"].get("lengths") or {None: record["summary"]}
            unshared = sorted(set(after_each) ^ set(before_each), key=str)
            if unshared:
                log.warning("mitigation table: %s and %s (%s) do not share the grid lengths %s: no row for them "
                            "(the two audits read different documents there)", name, mitigation["of"],
                            record["battery"], ", ".join(map(str, unshared)))
            for length in after_each:
                if length not in before_each:
                    continue
                before, after = before_each[length], after_each[length]
                rows.append({
                    "name": name, "of": mitigation["of"], "mitigation": describe(mitigation),
                    "battery": record["battery"] + (f" @{length}" if length is not None else ""),
                    "metric": record["metric"], "first_before": before["reference_mean"],
                    "first_after": after["reference_mean"], "psi_before": before["psi"], "psi_after": after["psi"],
                    "mean_before": before_means[length], "mean_after": after_means[length],
                    "retrieved_before": _retrieved_mean(out, base, shares),
                    "retrieved_after": _retrieved_mean(out, record, shares),
                    "drops_before": before["significant_drops"], "drops_after": after["significant_drops"],
                    "cost_multiplier": _ratio(_per_unit(record), _per_unit(base))})
    return pd.DataFrame(rows, columns=MITIGATION_COLUMNS)


def _per_unit(record: Mapping) -> float | None:
    """The model inputs a battery computed per unit: two audits sized to different units compare per unit. A
    reader's attention mitigation passes over each prompt more than once (`passes_per_prompt`): each pass counts. A
    judge's are the prompts its verdicts cost in use (`decision_inputs`: one per comparison, two when asked both
    ways), not the two orders its battery asks every judge to measure it."""
    inputs = record["extra"].get("decision_inputs", record["extra"].get("model_inputs"))
    if inputs is None or not record.get("n_units"):
        return None
    return inputs * record["extra"].get("passes_per_prompt", 1) / record["n_units"]


def _ratio(after, before) -> float:
    return float(after) / float(before) if after is not None and before else math.nan


def write_mitigations(out: str | Path, found: Mapping[str, Sequence[Mapping]], outputs: Mapping[str, str]) -> None:
    frame = mitigation_frame(out, found)
    header = ["Model", "Mitigation", "Battery", "Metric", "First", "First (mit.)", "PSI", "PSI (mit.)", "Mean",
              "Mean (mit.)", "At retrieved ranks", "(mit.)", "Drops", "Drops (mit.)", "Cost ×"]
    body = [[r["of"], r["mitigation"], r["battery"], r["metric"], number(r["first_before"]),
             number(r["first_after"]), number(r["psi_before"]), number(r["psi_after"]), number(r["mean_before"]),
             number(r["mean_after"]), number(r["retrieved_before"]), number(r["retrieved_after"]),
             str(int(r["drops_before"])), str(int(r["drops_after"])),
             number(r["cost_multiplier"], 2)] for _, r in frame.iterrows()]
    caption = ("Mitigations measured by the battery of the model they mitigate: the metric at the first position "
               "(the reference), PSI (1 - worst/best over positions), the mean over positions and the significant "
               "drops, without and with the mitigation; for a reader, also the mean weighted by how often its "
               "retriever ranked an answer-bearing document at each position (at retrieved ranks): the battery "
               "moves the gold document through every rank alike, so a rearranged context (the best documents at "
               "both ends) cannot change the plain mean or PSI of a reader that only minds where the gold document "
               "sits, and shows its effect only where real contexts put the gold document; the cost multiplier is "
               "the ratio of the inputs the model computed per unit (pairs times windows, prompts times a reader's "
               "passes over each prompt, listwise calls; "
               "cached answers count, as a fresh run pays for them). A grid has a row per length. Seconds are not in "
               "the table (a measured time differs on every run): each audit's <name>/<battery>.json records its "
               "own.")
    write_tables(dict(outputs), frame, Table(header, body, caption, "tab:audit-mitigations", wide=True))


def mitigation_files(out: str | Path) -> dict[str, str]:
    return table_files(str(out), "mitigations")
