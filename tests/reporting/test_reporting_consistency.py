"""How tables print a judge's position consistency."""

from __future__ import annotations

from posbias.reporting.consistency import agreement_text, p_text
from posbias.stats.consistency import order_consistency


def test_agreement_and_p_as_tables_print_them():
    found = order_consistency([True] * 5 + [False] * 5, [False] * 10, range(10))
    assert agreement_text(found) == "50.0% [24, 76] of 10"
    assert p_text(found) == "0.0625"
    assert p_text(order_consistency([True], [True], ["q"])) == "no test"
    assert agreement_text(order_consistency([], [], [])) == p_text({}) == "–"
