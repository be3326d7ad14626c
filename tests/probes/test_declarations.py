"""posbias.probes.declarations: the one list of probes, and what the schema and the steps read from it."""

from posbias.config import schema as _schema
from posbias.probes.declarations import POISON, PROBES
from posbias.probes import steps


def test_the_schema_lists_every_declared_probe_and_the_default_ones():
    section = _schema()["properties"]["probes"]["properties"]
    assert section["probes"]["items"]["enum"] == [probe.name for probe in PROBES]
    assert section["probes"]["default"] == [probe.name for probe in PROBES if probe.name != POISON]
    assert list(section["seeds"]["properties"]) == ["default"] + [probe.name for probe in PROBES
                                                                  if probe.name != POISON]


def test_the_steps_build_every_declared_probe_in_the_declared_order():
    assert steps.probe_names() == tuple(probe.name for probe in PROBES)
    assert set(steps._constructions()) == set(steps.probe_names()) - {POISON}  # poison is built from the foil's
