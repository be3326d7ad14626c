"""Reading the battery records the cards and the leaderboard are written from (`posbias.audit.card`)."""

from __future__ import annotations

import json

import pytest

from posbias.audit.card import read_records
from posbias.errors import InputError


def write_record(out, name, battery):
    path = out / name / f"{battery}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": name, "battery": battery}))


def test_only_the_configured_batteries_are_read_when_a_model_no_longer_runs_one(tmp_path):
    """A config that drops a battery leaves its files behind: the workflow's report must not show them."""
    for name, battery in [("ranker", "sweep"), ("ranker", "probes"), ("reader", "reader"), ("gone", "sweep")]:
        write_record(tmp_path, name, battery)
    found = read_records(tmp_path, [("ranker", "sweep"), ("reader", "reader")])
    assert {name: [r["battery"] for r in records] for name, records in found.items()} == {
        "ranker": ["sweep"], "reader": ["reader"]}
    assert sorted(read_records(tmp_path)) == ["gone", "ranker", "reader"]  # without jobs: everything there
    assert [r["battery"] for r in read_records(tmp_path)["ranker"]] == ["sweep", "probes"]  # in battery order
    with pytest.raises(InputError, match=r"no audit results for \['missing'\]"):
        read_records(tmp_path, [("ranker", "sweep"), ("missing", "sweep")])
