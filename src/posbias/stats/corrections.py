"""Corrections of a table's p-values for multiple comparisons, through statsmodels."""

from __future__ import annotations

import contextlib
import gc
from typing import Sequence

import numpy as np

# Our names are statsmodels' method names; the values are for captions.
METHODS = {"none": "no correction", "bonferroni": "Bonferroni", "holm": "Holm", "fdr_bh": "Benjamini-Hochberg"}


def _check(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"unknown correction {method!r}; choose one of {', '.join(METHODS)}")


def adjust(p_values: Sequence[float], method: str) -> np.ndarray:
    """Adjusted p-values, in the input order.

    NaN entries (tests that could not be run) pass through as NaN and are not
    counted in the family: they should not make the other tests stricter.
    """
    _check(method)
    p = np.asarray(p_values, dtype=float)
    if method == "none":
        return p.copy()
    tested = ~np.isnan(p)
    if np.any((p[tested] < 0) | (p[tested] > 1)):
        raise ValueError(f"p-values must lie in [0, 1]: {p[tested & ((p < 0) | (p > 1))][:3].tolist()}")
    adjusted = np.full(p.shape, np.nan)
    if tested.any():
        # imported here: statsmodels' multitest costs about a second to import, and most jobs that import this
        # module (through their stage's statistics) never correct anything
        import statsmodels.stats.multitest as multitest

        with _no_forced_collection():
            adjusted[tested] = multitest.multipletests(p[tested], method=method)[1]
    return adjusted


@contextlib.contextmanager
def _no_forced_collection():
    """statsmodels' Holm branch ends in `gc.collect()` (multitest.py imports gc inside the function), a full
    garbage collection per correction: about 0.1 s on a heap that holds torch and pandas, against microseconds for
    the correction itself, and the audit and its calibration correct thousands of curves. The collection frees
    nothing the correction needs, so it is skipped for the call's duration."""
    real = gc.collect
    gc.collect = lambda *args, **kwargs: 0
    try:
        yield
    finally:
        gc.collect = real


def describe(method: str, n_tests: int, family: str = "this table") -> str:
    """Caption text for a correction over the `n_tests` tests of `family` (what the tests were adjusted over)."""
    _check(method)
    if method == "none":
        return "no correction for multiple comparisons"
    tests = "test" if n_tests == 1 else "tests"
    return f"p-values adjusted with the {METHODS[method]} correction over the {n_tests} {tests} of {family}"


def describe_families(method: str, tests_per_family: Sequence[int], family: str) -> str:
    """Caption text for a correction applied within each of several families (`family` names one: "model's curve",
    "reader"), given how many tests each family had (NaN p-values not counted)."""
    _check(method)
    if method == "none":
        return "no correction for multiple comparisons"
    counts = sorted(set(tests_per_family)) or [0]
    count = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    tests = "test" if count == "1" else "tests"
    return f"p-values adjusted with the {METHODS[method]} correction over the {count} {tests} of each {family} " \
           f"(one family each)"
