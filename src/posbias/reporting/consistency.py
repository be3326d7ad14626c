"""How tables and captions print a judge's position consistency (`posbias.stats.consistency.order_consistency`):
the agreement with its Wilson interval, and the p of the clustered sign-flip test (`mcnemar_p`)."""

from __future__ import annotations

from typing import Mapping

from posbias.reporting.render import MISSING, NO_TEST, is_missing


def agreement_text(result: Mapping) -> str:
    """"95.0% [83, 99] of 40": the agreement, its Wilson bounds rounded to whole percents (as the RAG accuracy
    table prints its intervals) and the items; `MISSING` without items."""
    if not result or not result.get("n"):
        return MISSING
    return (f"{100 * result['agreement']:.1f}% [{100 * result['ci_low']:.0f}, {100 * result['ci_high']:.0f}] "
            f"of {result['n']}")


def p_text(result: Mapping) -> str:
    """The order test's p (`mcnemar_p`) with three significant digits; `NO_TEST` when no item changed its
    decision, `MISSING` without items."""
    if not result or not result.get("n"):
        return MISSING
    p = result.get("mcnemar_p")
    return NO_TEST if is_missing(p) else f"{p:.3g}"
