"""The card's verdict (`posbias.audit.verdict`) and the card it opens (`posbias.audit.card.write_card`): sentences
written from a battery's numbers, made here the way the audit makes them (`posbias.audit.results.summarise` on
values with a planted drop), and the card looked at in headless Chromium where it is installed."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from posbias.audit.card import CARD, write_card
from posbias.audit.results import BatteryResult, summarise
from posbias.audit.verdict import audit_verdict, battery_verdict
from posbias.reporting.render import number

STATISTICS = {"test": "randomisation", "correction": "holm", "alpha": 0.05, "confidence": 0.95, "n_resamples": 200,
              "seed": 0}
WINDOW = 254


def sweep_record(name: str, drop: float, units: int = 12, correction: str = "holm") -> tuple[dict, pd.DataFrame]:
    """A needle sweep of 6 positions, 100 tokens apart, whose reciprocal ranks fall by `drop` from the fourth
    position (token 300, past a 254-token window) on; summarised as the audit summarises it."""
    rng = np.random.default_rng(0)
    rows = []
    for unit in range(units):
        for position in range(6):
            value = min(1.0, max(0.0, 0.9 + rng.normal(0, 0.05) - (drop if position >= 3 else 0.0)))
            rows.append({"unit": unit, "position": position, "value": value, "tokens": 100.0 * position,
                         "end": 100.0 * position + 10})
    extra = {"chance": 0.457, "doc_tokens": 508, "n_distractors": 4}
    statistics = {**STATISTICS, "correction": correction}
    result = summarise(BatteryResult("sweep", "MRR", pd.DataFrame(rows), extra=extra), statistics, window=WINDOW)
    record = {"name": name, "battery": "sweep", "metric": "MRR", "kind": "bi-encoder", "spec": f"bi-encoder:{name}",
              "test": "randomisation", "n_units": units, "seconds": 1.0, "extra": extra,
              "model": {"window": WINDOW}, "settings": {"statistics": statistics, "sweep": {"source": None}},
              "summary": result.summary}
    return record, result.curve


def test_a_drop_past_the_window_is_said_with_its_numbers_power_and_chance():
    record, curve = sweep_record("dropping", drop=0.5)
    summary, text = record["summary"], battery_verdict(record, curve)
    assert summary["significant_drops"] == 3
    assert text.startswith(f"MRR falls from {number(curve['mean'].iloc[0])} when the needle comes first to "
                           f"{number(curve['mean'].min())} when the needle starts at token ")
    assert "3 of 5 later positions are significantly lower, the first when the needle starts at token 300, past " \
           "the model's 254-token window" in text
    assert "at or below chance (0.457)" in text
    assert f"a drop of {number(summary['detectable_drop'])} or more is found with 80% power" in text
    assert "randomisation tests against the first position, Holm-corrected at alpha 0.05, over 12 questions" in text


def test_no_drop_is_said_with_the_drop_the_tests_could_have_missed():
    record, curve = sweep_record("flat", drop=0.0)
    text = battery_verdict(record, curve)
    assert record["summary"]["significant_drops"] == 0
    assert "no later position is significantly lower" in text and "a smaller drop may be there unseen" in text
    assert "past the model's" not in text


def test_too_few_units_say_no_verdict_can_be_given():
    record, curve = sweep_record("tiny", drop=0.5, units=3)
    assert record["summary"]["underpowered"]
    assert "with 3 questions none of the 5 corrected tests can reach significance" in battery_verdict(record, curve)


def test_drops_found_without_a_correction_are_said_however_few_the_units():
    """Uncorrected (or Benjamini-Hochberg) tests over 6 units can reach p = 2/2^6: the drops are real findings."""
    record, curve = sweep_record("few", drop=0.5, units=6, correction="none")
    assert not record["summary"]["underpowered"] and record["summary"]["significant_drops"] == 3
    text = battery_verdict(record, curve)
    assert "3 of 5 later positions are significantly lower" in text and "uncorrected" in text
    assert "cannot reach significance" not in text


def test_a_flat_curve_names_no_lowest_position_when_the_first_is_lowest():
    record, curve = sweep_record("flat", drop=0.0)
    curve = curve.assign(mean=curve["mean"].iloc[0] + np.arange(len(curve)) * 0.01)  # rising: the first is lowest
    assert "lowest" not in battery_verdict(record, curve)


def test_pairs_that_all_tie_are_said_to_tie():
    from posbias.audit.verdict import first_last_sentence

    said = first_last_sentence({"n": 16, "t": float("nan"), "p": float("nan"), "win_rate": 0.0,
                                "mean_difference": 0.0})
    assert said.strip() == "With the evidence first or last in the same document, every one of the 16 pairs " \
                           "scores the same." and "nan" not in said


@pytest.fixture
def card(tmp_path):
    record, curve = sweep_record("dropping", drop=0.5)
    (tmp_path / "dropping").mkdir()
    curve.to_csv(tmp_path / "dropping" / "sweep.curve.csv", index=False)
    return write_card(tmp_path, "dropping", [record], [["python", "3.11"]]), record, curve


def test_the_card_opens_with_the_verdict_then_the_figure_and_a_summary_in_words(card):
    path, record, curve = card
    page = path.read_text()
    verdict, figure, summary = (page.index('class="verdict"'), page.index("<img"),
                                page.index('<table class="summary">'))
    assert verdict < page.index("<h2>") < figure < summary < page.index("<h3>Details</h3>")
    assert "<b>Position sweep:</b> MRR falls from" in page
    cells = re.findall(r"<td>(.*?)</td>", page)
    assert "True" not in cells and "False" not in cells  # booleans in words
    assert "3 of 5 later positions" in cells and "MRR at the first position" in cells
    assert page.count("<style>") == 1 and "p.verdict" in page  # the shared stylesheet, inlined


@pytest.mark.skipif(not (shutil.which("chromium") and shutil.which("pdftotext")),
                    reason="headless Chromium and poppler's pdftotext are not installed (apt-get install chromium "
                           "poppler-utils)")
def test_the_card_reads_the_same_on_screen_and_printed(card, tmp_path):
    """Chromium prints the card to PDF and dumps the DOM it rendered on screen: the verdict and the summary's labels
    are in both, in the same order, and the print has the figure (a page image) on its first page."""
    path, record, curve = card
    chromium = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer"]
    pdf = tmp_path / "card.pdf"
    subprocess.run([*chromium, f"--print-to-pdf={pdf}", path.as_uri()], check=True, capture_output=True,
                   timeout=120)
    screen = subprocess.run([*chromium, "--dump-dom", path.as_uri()], check=True, capture_output=True, text=True,
                            timeout=120).stdout
    printed = " ".join(subprocess.run(["pdftotext", pdf, "-"], check=True, capture_output=True, text=True).stdout
                       .split())
    verdict = audit_verdict([record], {"sweep": curve})
    for text in (screen, printed):
        flat = " ".join(re.sub(r"<[^>]+>", " ", text).split()).replace(" :", ":")
        assert verdict in flat
        assert flat.index(verdict) < flat.index("MRR at the first position") < flat.index("Details")
    images = subprocess.run(["pdfimages", "-list", "-f", "1", "-l", "1", pdf], capture_output=True, text=True)
    assert images.returncode == 0 and len(images.stdout.splitlines()) >= 3  # header, rule, the figure
    assert CARD == path.name


def test_a_grid_too_small_for_any_test_says_so_instead_of_finding_nothing():
    from posbias.audit.results import summarise_grid

    rng = np.random.default_rng(1)
    rows = [{"unit": f"q{unit}", "position": position, "depth": position / 2, "length": length,
             "value": float(np.clip(0.9 - 0.3 * position + rng.normal(0, 0.05), 0, 1))}
            for length in (40, 80) for unit in range(3) for position in range(3)]
    result = summarise_grid(BatteryResult("grid", "MRR", pd.DataFrame(rows), extra={"chance": 0.2}), STATISTICS)
    record = {"battery": "grid", "metric": "MRR", "test": "randomisation", "summary": result.summary,
              "settings": {"statistics": STATISTICS}, "extra": {"depths": [0.0, 0.5, 1.0], "chance": 0.2}}
    assert all(summary["underpowered"] for summary in result.summary["lengths"].values())
    text = battery_verdict(record, result.curve)
    assert text.startswith("0 of 2 context lengths have a depth significantly below the first")
    assert text.endswith("With 3 questions, no length's tests can reach significance: read the curves, not a verdict.")
