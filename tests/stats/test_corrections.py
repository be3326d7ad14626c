import numpy as np
import pytest

from posbias.stats.corrections import METHODS, adjust, describe

P = [0.01, 0.04, 0.03, 0.005, 0.20]


def test_bonferroni_by_hand():
    assert adjust(P, "bonferroni") == pytest.approx([0.05, 0.20, 0.15, 0.025, 1.0])  # 5p, capped at 1


def test_holm_by_hand():
    # sorted: 0.005*5, 0.01*4, 0.03*3, 0.04*2, 0.20*1, then running maximum
    expected = {0.005: 0.025, 0.01: 0.04, 0.03: 0.09, 0.04: 0.09, 0.20: 0.20}
    assert adjust(P, "holm") == pytest.approx([expected[p] for p in P])


def test_benjamini_hochberg_by_hand():
    # sorted p * 5 / rank: 0.025, 0.025, 0.05, 0.05, 0.20, then running minimum from the top
    expected = {0.005: 0.025, 0.01: 0.025, 0.03: 0.05, 0.04: 0.05, 0.20: 0.20}
    assert adjust(P, "fdr_bh") == pytest.approx([expected[p] for p in P])


def test_nan_passes_through_and_is_not_counted():
    adjusted = adjust([0.01, float("nan"), 0.04], "bonferroni")
    assert np.isnan(adjusted[1])
    assert adjusted[[0, 2]] == pytest.approx([0.02, 0.08])  # a family of 2, not 3
    assert np.isnan(adjust([float("nan")], "holm")).all()


def test_none_returns_the_input():
    assert adjust(P, "none").tolist() == P


def test_unknown_method_and_bad_p_values():
    with pytest.raises(ValueError, match="none, bonferroni, holm, fdr_bh"):
        adjust(P, "sidak")
    with pytest.raises(ValueError, match="none, bonferroni, holm, fdr_bh"):
        describe("BH", 3)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        adjust([0.5, 1.5], "holm")


def test_describe():
    assert set(METHODS) == {"none", "bonferroni", "holm", "fdr_bh"}
    assert describe("holm", 12) == "p-values adjusted with the Holm correction over the 12 tests of this table"
    assert describe("fdr_bh", 3) == \
        "p-values adjusted with the Benjamini-Hochberg correction over the 3 tests of this table"
    assert describe("none", 12) == "no correction for multiple comparisons"
    assert describe("bonferroni", 1, "the outcome breakdown") == \
        "p-values adjusted with the Bonferroni correction over the 1 test of the outcome breakdown"


def test_describe_families_counts_the_tests_of_each_family():
    from posbias.stats.corrections import describe_families

    assert describe_families("holm", [3, 3], "reader") == \
        "p-values adjusted with the Holm correction over the 3 tests of each reader (one family each)"
    assert describe_families("bonferroni", [1], "model's curve") == \
        "p-values adjusted with the Bonferroni correction over the 1 test of each model's curve (one family each)"
    assert "over the 2-4 tests of each reader" in describe_families("fdr_bh", [4, 2, 3], "reader")
    assert describe_families("none", [3], "reader") == "no correction for multiple comparisons"
    with pytest.raises(ValueError, match="unknown correction"):
        describe_families("sidak", [3], "reader")
