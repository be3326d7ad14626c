from posbias.rankers import catalog
from posbias.rankers.registry import RANKERS


def test_catalog_lists_exactly_the_registered_rankers_as_implemented():
    assert catalog.IMPLEMENTED == set(RANKERS)


def test_planned_rankers_are_not_registered_and_have_a_message():
    assert not set(catalog.PLANNED) & set(RANKERS)
    assert "model-zoo" in catalog.not_implemented_message("cedr", "cedr_knrm")
