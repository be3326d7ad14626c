"""The first-relevant-position analysis's files (`results/positions/{set}.tsv`): one row per (query, document)
with where its first relevant passage starts, read back as a table or as each query's earliest start."""

from __future__ import annotations

import pandas as pd

from posbias.errors import InputError

ROW_COLUMNS = ("kind", "qid", "doc_id", "source", "position", "position_bin", "doc_tokens", "length_bin")


def read_rows(path: str) -> pd.DataFrame:
    """A positions file (`results/positions/{set}.tsv`, one row per query and document)."""
    frame = pd.read_csv(path, sep="\t", dtype={"qid": str, "doc_id": str}, keep_default_na=False, na_values=[""])
    missing = [c for c in ROW_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(f"{path}: not a positions file (no column {', '.join(missing)})")
    return frame


def first_relevant_starts(frame: pd.DataFrame) -> dict[str, int]:
    """Each query's earliest located start in its judged relevant documents (the passage's BM25 documents and
    documents without a relevant passage or chunk left out): what the position breakdown of a table reads."""
    located = frame[(frame["source"] == "judged") & (frame["position"] >= 0)]
    return {str(qid): int(start) for qid, start in located.groupby("qid")["position"].min().items()}
