"""posbias.probes.declarations: every probe declared once, found by its file, and what the schema and the steps read
from the declarations."""

from posbias.config import schema as _schema
from posbias.plugins import load
from posbias.probes import steps
from posbias.probes.declarations import PROBES
from posbias.probes.declarations.poison import POISON


def test_the_schema_lists_every_declared_probe_and_the_default_ones():
    section = _schema()["properties"]["probes"]["properties"]
    assert section["probes"]["items"]["enum"] == [probe.name for probe in PROBES]
    assert section["probes"]["default"] == [probe.name for probe in PROBES if probe.name != POISON]
    assert list(section["seeds"]["properties"]) == ["default"] + [probe.name for probe in PROBES
                                                                  if probe.name != POISON]


def test_the_probes_come_in_the_probe_table_s_order_with_poison_last():
    assert [probe.name for probe in PROBES] == ["answer_importance", "position_first_last", "position_sweep",
                                                "literal", "brevity", "repetition", "foil", "poison"]
    assert steps.probe_names() == tuple(probe.name for probe in PROBES)


def test_every_probe_but_poison_names_functions_that_load():
    """Poison is built by the steps from the foil's sample; every other probe's two functions exist."""
    for probe in PROBES:
        if probe.name == POISON:
            assert probe.candidates is None and probe.pairs is None
            continue
        assert callable(load(probe.candidates)) and callable(load(probe.pairs)), probe.name


def test_a_new_declaration_module_is_found_by_its_file(tmp_path, monkeypatch):
    """A module of the package defining PROBES joins the list (before poison) with no other edit."""
    import sys

    import posbias.probes.declarations as package

    (tmp_path / "echo_probe.py").write_text(
        "from posbias.probes.declaration import ProbeDeclaration\n"
        "PROBES = (ProbeDeclaration('echo', 'm:candidates', 'm:pairs'),)\n")
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path)])
    try:
        assert [probe.name for probe in package._ordered()][-2:] == ["echo", "poison"]
    finally:
        sys.modules.pop("posbias.probes.declarations.echo_probe", None)  # the import of the temporary module
