"""Per-query evaluation with trec_eval semantics, through ir_measures (pytrec_eval).

Queries that are absent from the run are skipped, as trec_eval does without
`-c` (ir_measures' pytrec_eval provider would score them 0, so they are
dropped here first); a query in the run without judgments is skipped too.

Ties: trec_eval orders documents by score, then by document id descending.
ir_measures does not keep that order for cut-off measures (its RR@10 can
differ from trec_eval's on tied scores), so runs are first re-scored by their
trec_eval rank, and every metric sees the same order. Metric names are ir_measures'
(`RR@10`, `nDCG@10`, `AP`, `P@20`, ...).

Relevance level: `rel_level` is trec_eval's `-l`, the lowest grade that counts as
relevant. It becomes ir_measures' `rel` parameter of every measure that takes a
relevance threshold (AP, P, R, RR, Rprec, Bpref, SetP, ...); graded measures
such as nDCG use the grades as gains and are unchanged, as in trec_eval.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import ir_measures
import pandas as pd

from posbias.errors import InputError

PER_QUERY_COLUMNS = ["qid", "metric", "value"]


def parse_metrics(names: Iterable[str]) -> list:
    measures = []
    for name in names:
        try:
            measures.append(ir_measures.parse_measure(name))
        except Exception as err:  # ir_measures raises several types for bad names
            raise InputError(f"unknown metric {name!r}: {err}") from None
    return measures


def trec_eval_order(run: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Replace scores by strictly decreasing ones that keep trec_eval's ranking."""
    ordered = {}
    for qid, scores in run.items():
        ranked = sorted(scores.items(), key=lambda item: item[0], reverse=True)  # docno descending ...
        ranked.sort(key=lambda item: item[1], reverse=True)  # ... within score descending (stable sort)
        ordered[qid] = {doc: float(len(ranked) - rank) for rank, (doc, _) in enumerate(ranked)}
    return ordered


def with_rel_level(measure, name: str, rel_level: int):
    """`measure` with `rel=rel_level` where it has a relevance threshold (trec_eval's `-l`)."""
    param = measure.SUPPORTED_PARAMS.get("rel")
    if param is None or "rel=" in name.replace(" ", ""):
        return measure  # no threshold (nDCG, Judged, ...), or the user wrote one explicitly
    if "rel" not in measure.params and not isinstance(param.default, int):
        return measure  # no rel means something else here (NumRet: all retrieved, RBP: graded gains)
    return measure(rel=rel_level)


def per_query(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]],
              metrics: Iterable[str], rel_level: int = 1) -> pd.DataFrame:
    """Return a long table with one row per (query, metric): columns `qid`, `metric`, `value`.

    Only queries both judged and in the run are evaluated; `metric` holds each
    name as given (e.g. "RR@10", also when `rel_level` makes it `RR(rel=2)@10`).
    """
    names = list(metrics)
    measures = [with_rel_level(measure, name, rel_level) for measure, name in zip(parse_metrics(names), names)]
    by_repr = {str(m): name for m, name in zip(measures, names)}
    judged_and_run = {qid: judged for qid, judged in qrels.items() if run.get(qid)}
    ranked = trec_eval_order(run)
    rows = [(result.query_id, by_repr[str(result.measure)], float(result.value))
            for result in ir_measures.iter_calc(measures, judged_and_run, ranked)]
    frame = pd.DataFrame(rows, columns=PER_QUERY_COLUMNS)
    return frame.sort_values(["metric", "qid"], ignore_index=True)
