"""The evaluation stage's jobs that make numbers: per-query values to Parquet, seed averaging and pooling, and
the collections' and query sets' statistics (Tables 9 and 10's numbers). The tables and figures made from them
are `report`'s: these jobs run once per run and seed (a few hundred in the demo), so this module imports no more
than pandas and ir_measures (no scipy, no table layout).
"""

from __future__ import annotations

import pandas as pd

from posbias.data import statistics as stats
from posbias.evaluation.metrics import per_query
from posbias.evaluation.seeds import average_over_seeds
from posbias.io import atomic_write, read_qrels, read_run


def write_parquet(frame: pd.DataFrame, path: str) -> None:
    with atomic_write(path, "wb") as handle:
        frame.to_parquet(handle, index=False)


def evaluate_run(qrels: str, run: str, metrics: list[str], out: str, system: str, seed: int,
                 queryset: str, rel_level: int = 1) -> None:
    frame = per_query(read_qrels(qrels), read_run(run), metrics, rel_level=rel_level)
    frame = frame.assign(system=system, seed=seed, queryset=queryset)
    write_parquet(frame, out)


def combine_seeds(inputs: list[str], per_seed_out: str, averaged_out: str) -> None:
    """Stack per-seed values of all systems on a query set, then average over seeds."""
    frame = pd.concat([pd.read_parquet(path) for path in inputs], ignore_index=True)
    write_parquet(frame, per_seed_out)
    write_parquet(average_over_seeds(frame), averaged_out)


def pool_values(inputs: list[str], members: list[str], metrics: list[str], queryset: str, out: str) -> None:
    """A pooled query set's per-query values: its members' (one file each, in `members` order) stacked, each
    query id prefixed with its member's name (TREC DL years may reuse ids), keeping the pool's metrics."""
    frames = []
    for path, member in zip(inputs, members, strict=True):
        frame = pd.read_parquet(path)
        missing = sorted(set(metrics) - set(frame["metric"]))
        if missing:
            raise ValueError(f"{path}: has no values of {missing} for the pooled query set {queryset!r}")
        frame = frame[frame["metric"].isin(metrics)]
        frames.append(frame.assign(qid=member + ":" + frame["qid"].astype(str), queryset=queryset))
    write_parquet(pd.concat(frames, ignore_index=True), out)


# --- dataset statistics (Tables 9 and 10) -----------------------------------------------------------

def collection_statistics(docs: str | None, tokens: str | None, tokenizer: str, sample: int | None,
                          out: str) -> None:
    """Table 9's numbers of one collection: from its token store when given, else by tokenising `docs`."""
    counted = (stats.store_statistics(tokens, tokenizer) if tokens
               else stats.collection_statistics(docs, tokenizer, sample=sample))
    stats.write_statistics(counted, out)


def queryset_statistics(queries: str, qrels: str, tokenizer: str, rel_level: int, out: str) -> None:
    stats.write_statistics(stats.queryset_statistics(queries, qrels, tokenizer, rel_level=rel_level), out)
