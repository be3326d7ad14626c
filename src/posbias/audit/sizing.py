"""Sizing a battery for the drop it should find: with `detect: 0.10` in a battery's settings the audit runs the
battery once with its configured units, estimates from that curve how many units its tests need to find a drop of
0.10 below the first position at 80% power (`posbias.stats.power.units_for_drop`, from the spread of the curve's
paired differences), and runs it again with that many, at most what its data hold (`available_units`) and
`max_units` when given. The record's `sizing` says what was asked, what was needed and whether the cap binds; the
card prints it, so a curve that could not be sized says plainly what it can detect instead.

The first run's spread is an estimate, so the second run's detectable drop (the card's) may land a little above or
below `detect`: sizing aims the units, the card reports what they achieved.
"""

from __future__ import annotations

import logging
from typing import Callable, Mapping

from posbias.audit.battery_settings import DECLARED
from posbias.plugins import load

log = logging.getLogger(__name__)

# The setting that counts each battery's units (questions, probe queries)
UNIT_SETTING = {"sweep": "n_queries", "grid": "n_queries", "probes": "n", "reader": "n_questions",
                "reader_grid": "n_questions", "order": "n_queries", "judge": "n_questions"}


def _headline_values(result):
    """The values the summary speaks of: a grid's longest length."""
    values = result.values
    return values[values["length"] == values["length"].max()] if "length" in values else values


def units_needed(result, detect: float, alpha: float) -> int | None:
    """The units the result's curve needs to find a drop of `detect` at 80% power (None: its values do not vary)."""
    from posbias.audit.results import RATIO_SCALE
    from posbias.stats.power import difference_spread, units_for_drop

    values = _headline_values(result)
    positions = int(values["position"].nunique())
    reference = result.curve.attrs.get("reference", sorted(values["position"].unique())[0])
    return units_for_drop(detect, difference_spread(values, reference), positions - 1, alpha,
                          bounded=result.metric in RATIO_SCALE)


def available_units(battery: str, own: Mapping) -> int:
    """The most units the battery's data hold (its declaration's `units`)."""
    return int(load(DECLARED[battery].units)(own))


def _questions_less(own: Mapping, others: int) -> int:
    from posbias.audit.haystack import questions_and_pool

    questions, _ = questions_and_pool(own["source"], own.get("needles", "lexical"))
    return len(questions) - others


def haystack_units(own: Mapping) -> int:
    """The sweep's: the questions less those it takes as distractors."""
    return _questions_less(own, own["n_distractors"])


def grid_units(own: Mapping) -> int:
    """The grid's: as the sweep's, but LongEmbed's own sets are sized as configured."""
    if own["source"] and "longembed" in own["source"]:
        return int(own["n_queries"])
    return _questions_less(own, own["n_distractors"])


def order_units(own: Mapping) -> int:
    """The order battery's: the questions less those it takes as other candidates."""
    return _questions_less(own, own["n_candidates"] - 1)


def probe_units(own: Mapping) -> int:
    """The probe battery's: the probe queries its filter keeps."""
    from posbias.audit.batteries import probe_queries
    from posbias.docred.position import sweep_candidates

    return len(sweep_candidates(probe_queries(own), own["positions"], own["rest"]))


def judge_units(own: Mapping) -> int:
    """A live judge's: the embedded world's questions, one comparison each (a replay's are its records')."""
    from posbias.audit.haystack import WORLD

    return int(WORLD["n_farrelevant_queries"])


def reader_units(own: Mapping) -> int:
    """A reader's: the embedded world's 60 FarRelevant questions, or the records of its `source` file."""
    if own["source"]:
        from posbias.reading.qa_data import qa_records

        return sum(1 for _ in qa_records(own["source"]["qa"], True))
    from posbias.audit.haystack import WORLD

    return int(WORLD["n_farrelevant_queries"])


def run_sized(battery: str, settings: Mapping, run: Callable, summarise: Callable):
    """The battery's summarised result, and its sizing record (None without `detect`): `run(battery_settings)`
    runs the battery, `summarise(result)` adds its curve and summary."""
    own = settings[battery]
    result = summarise(run(own))
    detect = own.get("detect")
    if detect is None:
        return result, None
    key = UNIT_SETTING[battery]
    first, available = int(own[key]), available_units(battery, own)
    cap = min(int(own["max_units"]), available) if own["max_units"] else available
    needed = units_needed(result, float(detect), settings["statistics"]["alpha"])
    if needed is not None and needed > first and min(needed, cap) > first:
        log.info("%s: %d units to detect a drop of %s at 80%% power (a first run of %d estimated it; cap %d)",
                 battery, needed, detect, first, cap)
        result = summarise(run({**own, key: min(needed, cap)}))
    units = int(_headline_values(result).groupby("position")["unit"].nunique().min())
    return result, {"detect": float(detect), "first_units": first, "needed": needed, "units": units, "cap": cap,
                    "cap_binds": needed is not None and needed > cap}
