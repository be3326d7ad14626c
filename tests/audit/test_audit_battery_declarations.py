"""posbias.audit.battery_declarations: each battery says once what the rest of the audit asks of it."""

import inspect

from posbias.audit.battery_settings import DECLARED
from posbias.plugins import load


def test_every_battery_declares_its_run_card_sizing_and_calibration():
    """Its function, its card heading and place (each place once), how its units are counted and the mock
    calibration runs it on: all load, so the card, sizing and calibration need no edit for a new battery."""
    places = [declaration.card_order for declaration in DECLARED.values()]
    assert len(set(places)) == len(places)
    for name, declaration in DECLARED.items():
        assert declaration.title, name
        for target in (declaration.run, declaration.units, declaration.planted):
            assert callable(load(target)), (name, target)
        assert list(inspect.signature(load(declaration.units)).parameters) == ["own"], name
        assert list(inspect.signature(load(declaration.planted)).parameters) == ["plant", "settings"], name


def test_the_cards_list_the_batteries_in_their_declared_places():
    ordered = sorted(DECLARED, key=lambda name: DECLARED[name].card_order)
    assert ordered == ["sweep", "probes", "grid", "reader", "reader_grid", "order", "judge"]
