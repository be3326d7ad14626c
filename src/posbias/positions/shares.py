"""Bins and the table of shares (the study shows only histograms; a table states what Figure 7 shows).

A positions file holds one row per (query, document): `position_bin` (the first relevant passage's token bin,
or for the dense path the first relevant chunk's index; -1: no match, no relevant chunk) and `length_bin`.
Per query set: how many documents have the first relevant position in bin 0, in bin 1, in bin 2 or later, or
none; and the coverage, the share of its queries with at least one located position (the study: about 85 % for
MS MARCO).
"""

from __future__ import annotations

from typing import Mapping

import pandas as pd


NONE = -1
SHARE_COLUMNS = ("bin0", "bin1", "bin2_plus", "none")


def position_bin(position: int, bin_tokens: int) -> int:
    return NONE if position < 0 else position // bin_tokens


def length_bin(doc_tokens: int, bin_tokens: int, slack: int = 0) -> int:
    """`(slack + tokens) // bin`: the dense path adds 32 (the study: it absorbs sentence-boundary slack)."""
    return (slack + doc_tokens) // bin_tokens


def shares(rows: pd.DataFrame, n_queries: int) -> dict:
    """The shares (of documents) and the coverage (of queries) of one query set's rows."""
    n = len(rows)
    bins = rows["position_bin"] if n else pd.Series(dtype=int)
    located = rows[bins >= 0] if n else rows
    counts = {"bin0": int((bins == 0).sum()), "bin1": int((bins == 1).sum()), "bin2_plus": int((bins >= 2).sum()),
              "none": int((bins < 0).sum())}
    matched = located["qid"].nunique() if n else 0
    return {"queries": n_queries, "matched_queries": int(matched),
            "coverage": matched / n_queries if n_queries else float("nan"), "documents": n,
            **{f"share_{k}": (v / n if n else float("nan")) for k, v in counts.items()}, **counts}


def share_table(frames: Mapping[str, pd.DataFrame], queries: Mapping[str, int], labels: Mapping[str, str],
                unparseable: Mapping[str, int]) -> pd.DataFrame:
    """One row per query set, in the order given."""
    return pd.DataFrame([{"set": name, "label": labels.get(name, name), **shares(frame, queries[name]),
                          "unparseable_judgments": unparseable.get(name, 0)} for name, frame in frames.items()])
