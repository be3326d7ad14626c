"""The calibration: planted models make the curves they promise, every battery's false-positive rate under no
effect stays at or below its alpha (within simulation error) through the battery's own code path, a check that
an uncorrected family would fail, and planted drops are found."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from posbias.audit.results import chance
from posbias.audit.calibration import CALIBRATED, Plant, calibrate, shape, write_calibration
from posbias.cli import main
from posbias.errors import InputError


def test_shapes_are_zero_at_the_reference_and_full_at_their_deepest_point():
    assert [shape("none", r) for r in (0, 0.5, 1)] == [0, 0, 0]
    assert [shape("drop", r) for r in (0, 0.5, 1)] == [0, 0, 1]
    assert [shape("slope", r) for r in (0, 0.5, 1)] == [0, 0.5, 1]
    assert [shape("u", r) for r in (0, 0.5, 1)] == [0, 1, 0]
    with pytest.raises(InputError, match="unknown shape"):
        shape("zigzag", 0.5)


def test_a_plant_succeeds_at_its_planted_rate_correlated_within_units():
    plant, rng = Plant("slope", 0.3, seed=1, rho=0.5), np.random.default_rng(0)
    units = np.repeat(np.arange(4000), 2)
    found = plant.succeeds(units, [0.0, 1.0] * 4000, rng)
    first, last = found[0::2], found[1::2]
    assert first.mean() == pytest.approx(0.8, abs=0.02) and last.mean() == pytest.approx(0.5, abs=0.02)
    assert np.corrcoef(first, last)[0, 1] > 0.2  # a unit's positions share its level


def test_a_planted_drop_in_mrr_is_scaled_above_chance():
    """Not found, the needle ranks at random among the distractors: the MRR drop is the plant's size."""
    floor = chance(4)
    plant = Plant("drop", 0.15, seed=2, rho=0.0)
    found = plant.succeeds(np.arange(20000), [1.0] * 20000, np.random.default_rng(1), scale=1 - floor)
    mrr_last = found.mean() + (1 - found.mean()) * floor
    assert 0.8 + 0.2 * floor - mrr_last == pytest.approx(0.15, abs=0.01)


def test_a_drop_that_leaves_no_probability_is_refused():
    with pytest.raises(InputError, match="smaller --size"):
        Plant("drop", 0.9, seed=0).succeeds([0], [1.0], np.random.default_rng(0))


REPLICATES = 20
# small settings where the battery's defaults would cost seconds a replicate; the tests are the batteries' own
SMALL = {"grid": {"window_multiples": [1.0, 2.0], "depths": [0.0, 0.5, 1.0]}, "reader_grid": {"n_documents": [3, 5]}}


def consistent_with_alpha(rate: float, replicates: int, alpha: float) -> bool:
    """Whether `rate` of `replicates` is consistent with a false-positive rate at most alpha: an exact binomial
    test at the 1% level (so a calibration at alpha fails it 1% of the time at most; the seeds are fixed)."""
    return binomtest(round(rate * replicates), replicates, alpha, alternative="greater").pvalue > 0.01


@pytest.mark.parametrize("battery", CALIBRATED)
def test_every_battery_s_false_positive_rate_is_at_most_alpha(battery):
    frame = calibrate([battery], ["none"], [12], 0.15, REPLICATES, overrides=SMALL)
    row = frame.iloc[0]
    assert row["what"] == "false-positive rate" and row["replicates"] == REPLICATES
    assert consistent_with_alpha(row["rate"], REPLICATES, row["alpha"]), row.to_dict()


def test_the_check_fails_a_battery_that_finds_drops_where_none_was_planted():
    """The false-positive check is not vacuous: the same pipeline with an effect planted (as a broken battery would
    see one everywhere) fails it."""
    frame = calibrate(["probes"], ["slope"], [16], 1.0, REPLICATES)
    assert not consistent_with_alpha(frame.iloc[0]["rate"], REPLICATES, 0.05), frame.iloc[0].to_dict()


def test_a_large_planted_drop_is_found_and_the_detectable_drop_is_stated():
    frame = calibrate(["sweep"], ["drop"], [24], 0.4, 12)
    row = frame.iloc[0]
    assert row["what"] == "power" and row["rate"] >= 0.75
    assert 0 < row["detectable_drop"] < 0.5


def test_the_drop_the_cards_call_detectable_is_found_at_least_as_often_as_they_say():
    """The shape detectable plants the drop the no-effect runs state as detectable at 80% power."""
    frame = calibrate(["reader"], ["none", "detectable"], [24], 0.15, 16).set_index("shape")
    assert frame.loc["detectable", "size"] == frame.loc["none", "detectable_drop"] > 0
    assert frame.loc["detectable", "what"] == "power at the detectable drop"
    assert frame.loc["detectable", "rate_high"] >= 0.8  # 80% or more, within simulation error
    with pytest.raises(InputError, match="ask for none too"):
        calibrate(["reader"], ["detectable"], [24], 0.15, 2)


def test_the_command_writes_the_table_and_the_figure(tmp_path, capsys):
    assert main(["calibration", "--out", str(tmp_path), "--battery", "reader", "--units", "8", "--replicates", "2",
                 "--shape", "none", "--shape", "u"]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [f"calibration.{fmt}" for fmt in ("csv", "html", "md", "pdf", "png", "tex")]
    table = (tmp_path / "calibration.md").read_text()
    assert "| reader | mcnemar | 8 | 5 |" in table and "power: u" in table


def test_the_command_refuses_an_unknown_battery_with_status_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["calibration", "--out", str(tmp_path), "--battery", "haystack"])
    assert exit_info.value.code == 2 and "--battery" in capsys.readouterr().err


def test_the_planted_list_ranker_puts_the_gold_first_at_its_planted_rate_through_rankgpt():
    """The order battery's mock reads RankGPT's own prompt: with no drop planted (and rho 0) the gold is ranked
    first in about 80% of lists wherever it enters, and a drop at the last place lowers the MRR there alone."""
    from posbias.audit.batteries import order_battery
    from posbias.audit.battery_settings import settings_with
    from posbias.audit.calibration import planted_model

    settings = settings_with({"order": {"n_queries": 40}})["order"]
    curves = {}
    for kind, size in (("none", 0.0), ("drop", 0.4)):
        model = planted_model("order", Plant(kind, size, seed=3, rho=0.0), settings)
        curves[kind] = order_battery(model, settings).values.groupby("position")["value"].mean()
    floor = chance(settings["n_candidates"] - 1)
    assert curves["none"].min() > 0.8 + 0.2 * floor - 0.15
    assert curves["drop"].iloc[-1] < curves["drop"].iloc[:-1].min() - 0.15


def test_written_files_round_trip(tmp_path):
    frame = calibrate(["reader"], ["none"], [8], 0.15, 2)
    write_calibration(frame, tmp_path)
    assert (tmp_path / "calibration.csv").read_text().splitlines()[0].startswith("battery,test,shape")
