"""Combine per-query values of several training seeds before any test is run."""

from __future__ import annotations

import pandas as pd


def average_over_seeds(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean per (system, queryset, metric, qid) over seeds, with the seed count kept.

    A query missing from one seed's run would make the seeds disagree on what
    is averaged, so that is an error rather than a silent partial mean.
    """
    keys = ["system", "queryset", "metric", "qid"]
    grouped = frame.groupby(keys, sort=True)["value"]
    averaged = grouped.agg(value="mean", n_seeds="count").reset_index()
    expected = frame.groupby(["system", "queryset"])["seed"].nunique().rename("expected").reset_index()
    merged = averaged.merge(expected, on=["system", "queryset"])
    short = merged[merged["n_seeds"] != merged["expected"]]
    if not short.empty:
        row = short.iloc[0]
        raise ValueError(f"{row['system']} on {row['queryset']}: query {row['qid']} has {row['n_seeds']} "
                         f"seed values, other queries have {row['expected']}")
    return merged.drop(columns="expected")
