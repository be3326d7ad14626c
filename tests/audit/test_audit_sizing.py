"""Sizing a battery for the drop it should find (`detect`): the units come from a first run's spread, the cap
binds visibly, and the card says which."""

from __future__ import annotations

import pytest

from posbias.audit.batteries import sweep_battery
from posbias.audit.battery_settings import settings_with
from posbias.audit.results import summarise_result
from posbias.audit.calibration import Plant, planted_model
from posbias.audit.card import sizing_note
from posbias.audit.sizing import run_sized
from posbias.errors import InputError


def sized_sweep(detect, max_units, n_queries=8):
    settings = settings_with({"sweep": {"n_queries": n_queries, "detect": detect, "max_units": max_units}})
    model = planted_model("sweep", Plant("slope", 0.0, seed=4), settings["sweep"])
    runs = []

    def run(own):
        runs.append(own["n_queries"])
        return sweep_battery(model, own)

    result, sizing = run_sized("sweep", settings, run,
                               lambda r: summarise_result(r, settings["statistics"], model.window, "randomisation"))
    return result, sizing, runs


def test_without_detect_the_battery_runs_once_as_configured():
    result, sizing, runs = sized_sweep(None, 60)
    assert sizing is None and runs == [8]


def test_detect_reruns_with_the_units_the_first_run_says_are_needed():
    result, sizing, runs = sized_sweep(0.3, 60)
    assert runs[0] == 8 and len(runs) == 2 and 8 < runs[1] == sizing["needed"] <= 60
    assert sizing["units"] == runs[1] and not sizing["cap_binds"]
    # the second run's own estimate lands near the target (the first run's spread was an estimate)
    assert result.summary["detectable_drop"] == pytest.approx(0.3, rel=0.35)
    assert "Sized to detect a drop of 0.3 in MRR" in sizing_note({"sizing": sizing, "metric": "MRR",
                                                                  "summary": result.summary})


def test_a_cap_that_binds_is_said_plainly():
    result, sizing, runs = sized_sweep(0.1, 20)
    assert runs == [8, 20] and sizing["cap_binds"] and sizing["needed"] > 20 and sizing["units"] == 20
    note = sizing_note({"sizing": sizing, "metric": "MRR", "summary": result.summary})
    assert "<b>cannot</b>" in note and "cap of 20" in note


@pytest.mark.parametrize("value", [-0.1, 0, "0.1"])
def test_detect_must_be_a_positive_number(value):
    with pytest.raises(InputError, match=r"audit settings\.sweep\.detect"):
        settings_with({"sweep": {"detect": value}})


def test_sizing_stops_at_what_the_data_hold():
    from posbias.audit.sizing import available_units

    defaults = settings_with(None)
    # the embedded world's 60 questions, less the 4 each sweep question takes as distractors
    assert available_units("sweep", defaults["sweep"]) == 56
    assert available_units("reader", defaults["reader"]) == 60
    result, sizing, runs = sized_sweep(0.05, None)
    assert runs == [8, 56] and sizing["cap"] == 56 and sizing["cap_binds"]
